package access

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver "sqlite"
)

// Files in Options.StoreDir.
const (
	dbFile  = "access.db"
	keyFile = "access.key"
)

const schema = `
CREATE TABLE IF NOT EXISTS grants(
	key_id TEXT PRIMARY KEY, client TEXT NOT NULL, agent TEXT NOT NULL, generation TEXT NOT NULL,
	verifier BLOB NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER);
CREATE TABLE IF NOT EXISTS responses(
	id TEXT PRIMARY KEY, client TEXT NOT NULL, agent TEXT NOT NULL, key_id TEXT NOT NULL,
	runtime_id TEXT NOT NULL, conversation TEXT NOT NULL, idem_scope TEXT UNIQUE, fingerprint TEXT NOT NULL,
	surface TEXT NOT NULL, input TEXT NOT NULL, state TEXT NOT NULL, status TEXT NOT NULL, snapshot BLOB NOT NULL,
	created_at INTEGER NOT NULL, finished_at INTEGER, evidence TEXT);
CREATE INDEX IF NOT EXISTS responses_fp ON responses(client, agent, fingerprint, created_at);
CREATE INDEX IF NOT EXISTS responses_agent ON responses(agent, created_at);
CREATE TABLE IF NOT EXISTS events(
	response_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, data BLOB NOT NULL,
	PRIMARY KEY(response_id, seq)) WITHOUT ROWID;
`

// Record states: admitted is the write-ahead record of a turn handed to
// the dispatcher; done has its final snapshot and event log.
const (
	stateAdmitted = "admitted"
	stateDone     = "done"
)

type store struct {
	db *sql.DB
}

// openStore opens (creating) the database in WAL mode and the HMAC key.
func openStore(ctx context.Context, dir string) (*store, []byte, error) {
	if dir == "" {
		return nil, nil, errors.New("access: StoreDir is required")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("access: store dir: %w", err)
	}
	pepper, err := loadKey(filepath.Join(dir, keyFile))
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, dbFile)
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("access: open store: %w", err)
	}
	db.SetMaxOpenConns(1) // one writer; SQLite serializes writes anyway
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("access: store schema: %w", err)
	}
	_ = os.Chmod(path, 0o600)
	return &store{db: db}, pepper, nil
}

// loadKey reads the 32-byte HMAC key, creating it (0600) on first use.
func loadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) != 32 {
			return nil, fmt.Errorf("access: %s: want 32 bytes, have %d", path, len(b))
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("access: key: %w", err)
	}
	b = make([]byte, 32)
	_, _ = rand.Read(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("access: key: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("access: key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("access: key: %w", err)
	}
	return b, f.Close()
}

func (s *store) close() error { return s.db.Close() }

func (s *store) ping(ctx context.Context) bool { return s.db.PingContext(ctx) == nil }

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// grant is one stored key.
type grant struct {
	keyID, client, agent, generation string
	verifier                         []byte
	created, expires                 time.Time
	revoked                          *time.Time
}

func (s *store) insertGrant(ctx context.Context, g *grant) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO grants(key_id, client, agent, generation, verifier, created_at, expires_at) VALUES(?,?,?,?,?,?,?)`,
		g.keyID, g.client, g.agent, g.generation, g.verifier, millis(g.created), millis(g.expires))
	return err
}

func (s *store) revokeGrant(ctx context.Context, keyID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE grants SET revoked_at=? WHERE key_id=? AND revoked_at IS NULL`, millis(at), keyID)
	return err
}

func (s *store) expireGrant(ctx context.Context, keyID string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE grants SET expires_at=? WHERE key_id=? AND expires_at>?`, millis(at), keyID, millis(at))
	return err
}

func (s *store) loadGrants(ctx context.Context) (map[string]*grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key_id, client, agent, generation, verifier, created_at, expires_at, revoked_at FROM grants`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]*grant{}
	for rows.Next() {
		var g grant
		var c, e int64
		var r sql.NullInt64
		if err := rows.Scan(&g.keyID, &g.client, &g.agent, &g.generation, &g.verifier, &c, &e, &r); err != nil {
			return nil, err
		}
		g.created, g.expires = fromMillis(c), fromMillis(e)
		if r.Valid {
			t := fromMillis(r.Int64)
			g.revoked = &t
		}
		out[g.keyID] = &g
	}
	return out, rows.Err()
}

// record is one response's row.
type record struct {
	id, client, agent, keyID, runtimeID, conversation string
	idemScope                                         string // "" for an unkeyed turn
	fingerprint, surface, input, state, status        string
	snapshot                                          []byte
	created                                           time.Time
}

func (s *store) insertRecord(ctx context.Context, r *record) error {
	var scope any
	if r.idemScope != "" {
		scope = r.idemScope
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO responses(id, client, agent, key_id, runtime_id, conversation, idem_scope, fingerprint, surface, input, state, status, snapshot, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.id, r.client, r.agent, r.keyID, r.runtimeID, r.conversation, scope, r.fingerprint, r.surface, r.input, r.state, r.status, r.snapshot, millis(r.created))
	return err
}

const recordCols = `id, client, agent, key_id, runtime_id, conversation, COALESCE(idem_scope, ''), fingerprint, surface, input, state, status, snapshot, created_at`

func scanRecord(row interface{ Scan(...any) error }) (*record, error) {
	var r record
	var c int64
	if err := row.Scan(&r.id, &r.client, &r.agent, &r.keyID, &r.runtimeID, &r.conversation, &r.idemScope, &r.fingerprint, &r.surface, &r.input, &r.state, &r.status, &r.snapshot, &c); err != nil {
		return nil, err
	}
	r.created = fromMillis(c)
	return &r, nil
}

// getRecord returns the record of id, or nil.
func (s *store) getRecord(ctx context.Context, id string) (*record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM responses WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// byScope returns the record of an idempotency scope, or nil.
func (s *store) byScope(ctx context.Context, scope string) (*record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM responses WHERE idem_scope=?`, scope))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// retryOf returns the latest unkeyed turn of (client, agent) with this
// fingerprint admitted since since, or nil: the turn a Stainless retry repeats.
func (s *store) retryOf(ctx context.Context, client, agent, fp string, since time.Time) (*record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM responses WHERE client=? AND agent=? AND fingerprint=? AND idem_scope IS NULL AND created_at>=? ORDER BY created_at DESC, rowid DESC LIMIT 1`,
		client, agent, fp, millis(since)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// head returns the latest turn admitted on agent, or nil.
func (s *store) head(ctx context.Context, agent string) (*record, error) {
	r, err := scanRecord(s.db.QueryRowContext(ctx, `SELECT `+recordCols+` FROM responses WHERE agent=? ORDER BY rowid DESC LIMIT 1`, agent))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// admitted returns every write-ahead record that has no outcome yet.
func (s *store) admitted(ctx context.Context) ([]*record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+recordCols+` FROM responses WHERE state=? ORDER BY rowid`, stateAdmitted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// storedEvent is one event of a response's log.
type storedEvent struct {
	typ  string
	data []byte
}

// finish stores a turn's outcome and event log in one transaction.
func (s *store) finish(ctx context.Context, id, status string, snapshot []byte, events []storedEvent, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE responses SET state=?, status=?, snapshot=?, finished_at=? WHERE id=?`, stateDone, status, snapshot, millis(at), id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE response_id=?`, id); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO events(response_id, seq, type, data) VALUES(?,?,?,?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, e := range events {
		if _, err := stmt.ExecContext(ctx, id, i, e.typ, e.data); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// settle records an operator's reconciliation: a new status, snapshot and
// terminal event, and the evidence (kept in the store, never served).
func (s *store) settle(ctx context.Context, id, status string, snapshot []byte, last storedEvent, lastSeq int, evidence string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE responses SET status=?, snapshot=?, evidence=? WHERE id=?`, status, snapshot, evidence, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE events SET type=?, data=? WHERE response_id=? AND seq=?`, last.typ, last.data, id, lastSeq); err != nil {
		return err
	}
	return tx.Commit()
}

// events returns a response's stored log (nil once the resume window has
// dropped it).
func (s *store) events(ctx context.Context, id string) ([]storedEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT type, data FROM events WHERE response_id=? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storedEvent
	for rows.Next() {
		var e storedEvent
		if err := rows.Scan(&e.typ, &e.data); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// purge applies retention: event logs of turns finished before eventsBefore,
// idempotency scopes admitted before idemBefore, whole finished records
// before recordsBefore.
func (s *store) purge(ctx context.Context, eventsBefore, idemBefore, recordsBefore time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM events WHERE response_id IN (SELECT id FROM responses WHERE state=? AND finished_at<?)`, stateDone, millis(eventsBefore)); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE responses SET idem_scope=NULL, fingerprint='' WHERE idem_scope IS NOT NULL AND created_at<?`, millis(idemBefore)); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM responses WHERE state=? AND created_at<?`, stateDone, millis(recordsBefore))
	return err
}

// knownConversation says whether the client had turns in conversation.
func (s *store) knownConversation(ctx context.Context, client, agent, conv string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM responses WHERE client=? AND agent=? AND conversation=?`, client, agent, conv).Scan(&n)
	return n > 0, err
}
