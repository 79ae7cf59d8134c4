package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/contract/validate"
)

// DefaultItemTimeout bounds one item.
const DefaultItemTimeout = 60 * time.Second

// cleanupTimeout bounds stopping what an item left running.
const cleanupTimeout = 30 * time.Second

// Options control a run of the suite.
type Options struct {
	// ItemTimeout bounds each item (default DefaultItemTimeout).
	ItemTimeout time.Duration
	// ClientOptions configure the clients the suite builds for items that
	// start runtimes or run doctor (host binary, extra PATH, logger). The
	// suite adds its own environment and state directory to each.
	ClientOptions []fabric.Option
	// Env is the base environment of those clients and of the hosts they
	// start (default os.Environ()).
	Env []string
	// TempDir is where the suite's scratch directories go (default the
	// system temporary directory). They are removed at the end.
	TempDir string
	// Only, when not empty, runs just the items with these ids; the others
	// are skipped.
	Only []string
	// Progress, when set, receives each item as soon as it has a verdict.
	Progress func(Item)
}

// suite is one run: the profile, the caller's client and scratch space.
type suite struct {
	client    *fabric.Client
	profile   Profile
	opts      Options
	validator *validate.Validator
	tmp       string // scratch root
	baseDir   string // base_dir of every config
	info      *fabric.AdapterInfo
	findErr   error // why the adapter was not found
	digests   digests
}

// item is one entry of the matrix.
type item struct {
	id, name string
	run      func(ctx context.Context, t *itemT) (string, error)
}

// matrix lists the items in the order they run.
func matrix() []item {
	return []item{
		{"1", "discovery", discovery},
		{"2", "smallest-plan", smallestPlan},
		{"3", "unsupported-field", unsupportedField},
		{"4", "invalid-settings", invalidSettings},
		{"5", "doctor-env", doctorEnv},
		{"6", "start-stop", startStop},
		{"7", "invoke", invoke},
		{"8", "failed-invoke", failedInvoke},
		{"9", "start-failure", startFailure},
		{"10", "transport-failure", transportFailure},
		{"11", "malformed-output", malformedOutput},
		{"12", "cleanup", cleanup},
		{"13", "isolation", isolation},
		{"14", "secret-redaction", secretRedaction},
	}
}

// Run runs the conformance matrix for the profile's adapter and returns
// one verdict per item. Discovery and planning items use c (a nil c is
// fabric.New(opts.ClientOptions...)); items that start runtimes or run
// doctor build their own clients from opts so that each has its own
// environment and state directory. Every item is bounded by
// opts.ItemTimeout; Run cleans up whatever the items started.
func Run(ctx context.Context, c *fabric.Client, profile Profile, opts Options) Report {
	start := time.Now()
	if opts.ItemTimeout <= 0 {
		opts.ItemTimeout = DefaultItemTimeout
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if c == nil {
		c = fabric.New(opts.ClientOptions...)
	}
	rep := Report{Adapter: profile.AdapterID}
	if profile.ModelStub != "" {
		stub, served, err := serveModelStub(profile)
		if err != nil {
			s := &suite{opts: opts}
			s.record(&rep, Item{ID: "0", Name: "setup", Verdict: Fail, Detail: err.Error()})
			rep.Elapsed = time.Since(start)
			return rep
		}
		defer stub.Close()
		profile = served
		rep.ModelEndpoint = &ModelEndpoint{Script: served.ModelStub, SHA256: stub.scriptSHA256}
		defer func() { rep.ModelEndpoint.Requests = len(stub.Requests()) }()
	}
	s := &suite{client: c, profile: profile, opts: opts, validator: validate.NewValidator()}
	if err := s.setup(ctx); err != nil {
		s.record(&rep, Item{ID: "0", Name: "setup", Verdict: Fail, Detail: err.Error()})
		rep.Elapsed = time.Since(start)
		return rep
	}
	defer os.RemoveAll(s.tmp)
	for _, it := range matrix() {
		s.record(&rep, s.runItem(ctx, it))
	}
	rep.Passed = !slices.ContainsFunc(rep.Items, func(it Item) bool { return it.Verdict == Fail })
	rep.Elapsed = time.Since(start)
	return rep
}

func (s *suite) record(rep *Report, it Item) {
	rep.Items = append(rep.Items, it)
	if s.opts.Progress != nil {
		s.opts.Progress(it)
	}
}

// setup validates the profile, makes the scratch space and looks the
// adapter up (a missing adapter fails the discovery item).
func (s *suite) setup(ctx context.Context) error {
	if err := s.profile.Validate(); err != nil {
		return fmt.Errorf("invalid profile: %w", err)
	}
	tmp, err := os.MkdirTemp(s.opts.TempDir, "fabric-conformance-")
	if err != nil {
		return err
	}
	if tmp, err = filepath.Abs(tmp); err != nil {
		return err
	}
	s.tmp = tmp
	s.baseDir = filepath.Join(tmp, "base")
	if err := os.Mkdir(s.baseDir, 0o700); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	s.info, s.findErr = s.find(ctx, s.client, s.baseDir)
	return nil
}

// find looks the profile's adapter up with c as a config for baseDir
// would see it.
func (s *suite) find(ctx context.Context, c *fabric.Client, baseDir string) (*fabric.AdapterInfo, error) {
	var local []string
	if s.profile.Descriptor != "" {
		local = []string{s.profile.Descriptor}
	}
	infos, _, err := c.Adapters(ctx, baseDir, local)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := range infos {
		if infos[i].AdapterID == s.profile.AdapterID {
			return &infos[i], nil
		}
		ids = append(ids, infos[i].AdapterID)
	}
	return nil, fmt.Errorf("adapter %s was not discovered (known: %v)", s.profile.AdapterID, ids)
}

// errSkip marks an item that does not apply.
type errSkip struct{ reason string }

func (e *errSkip) Error() string { return e.reason }

func skipf(format string, args ...any) error { return &errSkip{fmt.Sprintf(format, args...)} }

// runItem runs one item with its timeout, scratch directory and cleanup.
func (s *suite) runItem(ctx context.Context, it item) (out Item) {
	out = Item{ID: it.id, Name: it.name}
	start := time.Now()
	defer func() { out.Elapsed = time.Since(start) }()
	if len(s.opts.Only) > 0 && !slices.Contains(s.opts.Only, it.id) {
		out.Verdict, out.Detail = Skip, "not selected"
		return out
	}
	if s.info == nil && it.id != "1" {
		out.Verdict, out.Detail = Skip, "prerequisite missing: the adapter was not discovered"
		return out
	}
	dir, err := os.MkdirTemp(s.tmp, "item"+it.id+"-")
	if err != nil {
		out.Verdict, out.Detail = Fail, err.Error()
		return out
	}
	ictx, cancel := context.WithTimeout(ctx, s.opts.ItemTimeout)
	defer cancel()
	t := &itemT{s: s, dir: dir}
	detail, err := t.run(ictx, it)
	if cerr := t.cleanup(); cerr != nil && err == nil {
		err = cerr
	}
	out.Claim, out.Observation = t.claimed, t.observed
	if err == nil && t.observed != nil && !t.observed.Agrees {
		err = fmt.Errorf("the observation disagrees: %s", t.observed.Result)
	}
	var skip *errSkip
	switch {
	case err == nil:
		out.Verdict, out.Detail = Pass, detail
	case errors.As(err, &skip):
		out.Verdict, out.Detail = Skip, skip.reason
	default:
		out.Verdict, out.Detail = Fail, err.Error()
		if ictx.Err() != nil && ctx.Err() == nil {
			out.Detail += fmt.Sprintf(" (item timeout %s)", s.opts.ItemTimeout)
		}
	}
	return out
}

// itemT is what an item works with: its scratch directory, the clients
// and runtimes it made (stopped at the end).
type itemT struct {
	s        *suite
	dir      string
	runtimes []*fabric.Runtime
	dirs     []string // state directories to check for leaks
	claimed  *Claim
	observed *Observation
}

func (t *itemT) run(ctx context.Context, it item) (detail string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return it.run(ctx, t)
}

// cleanup stops every runtime the item started, then kills (and reports)
// any process still carrying one of its state directories.
func (t *itemT) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for _, rt := range t.runtimes {
		_, _ = rt.Stop(ctx)
	}
	var errs []error
	for _, d := range t.dirs {
		if leaked := processesMentioning(d); len(leaked) > 0 {
			killPids(leaked)
			errs = append(errs, fmt.Errorf("processes %v of stopped runtimes were still running (killed)", leaked))
		}
	}
	return errors.Join(errs...)
}

// clientFor builds a client whose environment is the suite's base
// environment changed by extra (a nil value unsets), with a fresh state
// directory, and returns it with that directory.
func (t *itemT) clientFor(extra map[string]*string, overlays ...*Overlay) (*fabric.Client, string, error) {
	stateDir, err := os.MkdirTemp(t.dir, "state-")
	if err != nil {
		return nil, "", err
	}
	t.dirs = append(t.dirs, stateDir)
	env := hostEnv(t.s.opts.Env, &t.s.profile, extra, overlays...)
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	opts := append(slices.Clone(t.s.opts.ClientOptions),
		fabric.WithEnv(lookup), fabric.WithHostEnv(environ(env)), fabric.WithStateDir(stateDir))
	return fabric.New(opts...), stateDir, nil
}

// load parses a config document with c.
func (t *itemT) load(c *fabric.Client, d doc) (*fabric.Loaded, error) {
	return t.loadIn(c, d, t.s.baseDir)
}

// loadIn parses a config document whose base_dir is baseDir.
func (t *itemT) loadIn(c *fabric.Client, d doc, baseDir string) (*fabric.Loaded, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return c.ParseConfig(data, "conformance.json", fabric.LoadOptions{BaseDir: baseDir})
}

// plan loads and plans a config document with c.
func (t *itemT) plan(ctx context.Context, c *fabric.Client, d doc) (*contract.RunPlan, error) {
	return t.planIn(ctx, c, d, t.s.baseDir)
}

// planIn loads and plans a config document whose base_dir is baseDir.
func (t *itemT) planIn(ctx context.Context, c *fabric.Client, d doc, baseDir string) (*contract.RunPlan, error) {
	l, err := t.loadIn(c, d, baseDir)
	if err != nil {
		return nil, err
	}
	return c.Plan(ctx, l)
}

// start plans and starts a runtime, which is stopped at the item's end.
func (t *itemT) start(ctx context.Context, c *fabric.Client, d doc) (*fabric.Runtime, error) {
	p, err := t.plan(ctx, c, d)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	rt, err := c.StartPlan(ctx, p)
	if err != nil {
		return nil, err
	}
	t.runtimes = append(t.runtimes, rt)
	return rt, nil
}

// startWith builds a client for the overlays and starts the base config
// with them applied.
func (t *itemT) startWith(ctx context.Context, overlays ...*Overlay) (*fabric.Runtime, string, error) {
	c, stateDir, err := t.clientFor(nil, overlays...)
	if err != nil {
		return nil, "", err
	}
	rt, err := t.start(ctx, c, t.s.profile.config(overlays...))
	if err != nil {
		return nil, stateDir, fmt.Errorf("start: %w", err)
	}
	return rt, stateDir, nil
}

// needRuntime skips items that start runtimes when the profile says none
// can start here.
func (t *itemT) needRuntime() error {
	if t.s.profile.CapabilitiesOnly {
		return skipf("capabilities_only profile: runtimes cannot start here")
	}
	return nil
}

// needInvoke skips items that need an invocation when none can run here.
func (t *itemT) needInvoke() error {
	if err := t.needRuntime(); err != nil {
		return err
	}
	if t.s.profile.StartStopOnly {
		return skipf("start_stop_only profile: invocations cannot run here")
	}
	return nil
}

// validate checks v against the named contract schema.
func (t *itemT) validate(name string, v any) error {
	if err := t.s.validator.ValidateValue(name, v); err != nil {
		return fmt.Errorf("not a valid %s document: %w", name, err)
	}
	return nil
}
