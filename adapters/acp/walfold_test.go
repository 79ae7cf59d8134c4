package acp

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // SQLite writes the WALs foldWAL reads
)

// killedDB makes a WAL-mode database with rows committed in several
// transactions and copies it and its WAL while the connection is still
// open (as a killed agent leaves them: never checkpointed) into a new
// directory; it returns the copies' paths.
func killedDB(t *testing.T) (db, wal string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "x.sqlite")
	conn, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for _, q := range []string{
		"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
		"CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)",
		"CREATE TABLE b (k TEXT PRIMARY KEY, v BLOB)",
		"INSERT INTO a (v) SELECT hex(randomblob(300)) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 200) SELECT x FROM c)",
		"DELETE FROM a WHERE id % 3 = 0",
		"INSERT INTO b VALUES ('k', randomblob(5000))",
		"DROP TABLE b",
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	for _, n := range []string{"x.sqlite", "x.sqlite-wal"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "x.sqlite"), filepath.Join(dir, "x.sqlite-wal")
}

// content is what the database at p holds: its integrity check and rows.
func content(t *testing.T, p string) (check string, rows int, tables int) {
	t.Helper()
	conn, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("SELECT count(*) FROM a").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	return check, rows, tables
}

func TestFoldWAL(t *testing.T) {
	db, wal := killedDB(t)
	st, _ := os.Stat(wal)
	if st.Size() < 100_000 {
		t.Fatalf("the WAL holds %d bytes: the test's transactions were checkpointed", st.Size())
	}
	// What SQLite itself recovers from the same files.
	ref := filepath.Join(t.TempDir(), "x.sqlite")
	for _, n := range []string{"", "-wal"} {
		b, _ := os.ReadFile(db + n)
		if err := os.WriteFile(ref+n, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wantCheck, wantRows, wantTables := content(t, ref)
	if wantCheck != "ok" || wantRows != 134 || wantTables != 2 { // a and sqlite_sequence
		t.Fatalf("SQLite's own recovery: %s, %d rows, %d tables", wantCheck, wantRows, wantTables)
	}

	if err := foldWAL(db, wal); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the WAL is still there (%v)", err)
	}
	folded, _ := os.Stat(db)
	t.Logf("database + WAL %d bytes -> %d", st.Size(), folded.Size())
	if check, rows, tables := content(t, db); check != "ok" || rows != wantRows || tables != wantTables {
		t.Errorf("folded: %s, %d rows, %d tables; want ok, %d, %d", check, rows, tables, wantRows, wantTables)
	}
}

// TestFoldWALDropsUncommitted: a frame after the last commit (a
// transaction the agent was killed in) and frames whose checksum breaks
// are not written.
func TestFoldWALDropsUncommitted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(last []byte, s0, s1 uint32, order binary.ByteOrder) []byte
	}{
		{"uncommitted", func(last []byte, s0, s1 uint32, order binary.ByteOrder) []byte {
			f := append([]byte{}, last...)
			binary.BigEndian.PutUint32(f[4:8], 0) // no commit
			for i := 24; i < len(f); i++ {
				f[i] = 0xff
			}
			s0, s1 = walChecksum(order, s0, s1, f[:8])
			s0, s1 = walChecksum(order, s0, s1, f[24:])
			binary.BigEndian.PutUint32(f[16:20], s0)
			binary.BigEndian.PutUint32(f[20:24], s1)
			return f
		}},
		{"bad checksum", func(last []byte, _, _ uint32, _ binary.ByteOrder) []byte {
			f := append([]byte{}, last...)
			for i := 24; i < len(f); i++ {
				f[i] = 0xff
			}
			return f
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, wal := killedDB(t)
			w, _ := os.ReadFile(wal)
			order := binary.ByteOrder(binary.LittleEndian)
			if binary.BigEndian.Uint32(w) == 0x377f0683 {
				order = binary.BigEndian
			}
			frame := 24 + int(binary.BigEndian.Uint32(w[8:12]))
			last := w[len(w)-frame:]
			s0, s1 := binary.BigEndian.Uint32(last[16:20]), binary.BigEndian.Uint32(last[20:24])
			if err := os.WriteFile(wal, append(w, tc.spoil(last, s0, s1, order)...), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := foldWAL(db, wal); err != nil {
				t.Fatal(err)
			}
			if check, rows, _ := content(t, db); check != "ok" || rows != 134 {
				t.Errorf("folded: %s, %d rows; want ok, 134", check, rows)
			}
		})
	}
}

func TestFoldWALRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(db, wal string)
	}{
		{"not a WAL", func(_, wal string) { _ = os.WriteFile(wal, make([]byte, 4096), 0o600) }},
		{"a bad header checksum", func(_, wal string) {
			w, _ := os.ReadFile(wal)
			w[28] ^= 1
			_ = os.WriteFile(wal, w, 0o600)
		}},
		{"not a database", func(db, _ string) { _ = os.WriteFile(db, []byte("hello"), 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, wal := killedDB(t)
			tc.spoil(db, wal)
			beforeDB, _ := os.ReadFile(db)
			beforeWAL, _ := os.ReadFile(wal)
			if err := foldWAL(db, wal); err == nil {
				t.Fatal("foldWAL: no error")
			}
			afterDB, _ := os.ReadFile(db)
			afterWAL, _ := os.ReadFile(wal)
			if string(afterDB) != string(beforeDB) || string(afterWAL) != string(beforeWAL) {
				t.Error("a refused fold changed the files")
			}
		})
	}
}
