package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
	"github.com/fabric-runtime/fabric/internal/jsonvalue"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// Options configure services. Runtime carries the host launching options
// shared with runtimes (host binary, state dir, environment, binding key,
// logger).
type Options struct {
	Runtime runtime.Options
}

func (o *Options) lookup() func(string) (string, bool) {
	if o.Runtime.LookupEnv != nil {
		return o.Runtime.LookupEnv
	}
	return func(string) (string, bool) { return "", false }
}

// User is a runtime bound to a service, as the service sees it.
type User interface {
	ID() string
	State() string
}

// Service is one prepared or attached service.
type Service struct {
	handle contract.ServiceHandle // Status is filled by Handle
	host   *runtime.ServiceHost
	key    runtime.BindingKey
	// env holds the credential variables bound runtime hosts receive.
	env map[string]string

	mu          sync.Mutex
	status      string
	pending     int    // runtimes starting with this service
	users       []User // runtimes started with this service
	releaseDone chan struct{}
	releaseErr  error
}

// Prepare starts a Fabric-owned service for the plan's adapter: a service
// host runs the adapter's service until Release. The plan must come from a
// config without harness.settings.interfaces: the caller refuses one with
// RejectInterfaces before planning.
func Prepare(ctx context.Context, p *contract.RunPlan, opts Options) (*Service, error) {
	if err := CheckAdapter(p, contract.StagePrepare); err != nil {
		return nil, err
	}
	d := &p.AdapterDescriptor.Descriptor
	id := runtime.NewID("service")
	typ := ServiceTypes(d)[0]
	h, res, err := runtime.LaunchService(ctx, p, opts.Runtime, runtime.ServiceLaunch{
		Method: hostproto.MethodServiceStart,
		Params: hostproto.ServiceStartParams{ServiceID: id, ServiceType: typ},
	})
	if err != nil {
		return nil, err
	}
	return finish(ctx, h, res, nil, nil, contract.ServiceHandle{ServiceID: id, AdapterID: d.AdapterID, ServiceType: typ, Ownership: contract.OwnershipFabric}, opts)
}

// Attach attaches to a caller-owned service: it validates ref against the
// plan's adapter, resolves the credentials ref names from the caller's
// environment, and launches an attachment host whose adapter probes the
// service (if the adapter can). Release detaches; the service is never
// stopped by Fabric. The caller refuses harness.settings.interfaces with
// RejectInterfaces before planning, as for Prepare.
func Attach(ctx context.Context, p *contract.RunPlan, ref contract.ServiceReference, opts Options) (*Service, error) {
	if err := CheckAdapter(p, contract.StagePrepare); err != nil {
		return nil, err
	}
	env, err := ValidateReference(p, &ref, opts.lookup())
	if err != nil {
		return nil, err
	}
	d := &p.AdapterDescriptor.Descriptor
	id := runtime.NewID("service")
	ref.Connection = clone(ref.Connection)
	ref.Metadata = clone(ref.Metadata)
	h, res, err := runtime.LaunchService(ctx, p, opts.Runtime, runtime.ServiceLaunch{
		Method: hostproto.MethodServiceAttach,
		Params: hostproto.ServiceStartParams{ServiceID: id, ServiceType: ref.ServiceType, Reference: &ref},
		Env:    env,
	})
	if err != nil {
		return nil, err
	}
	if res.Connection == nil {
		res.Connection = clone(ref.Connection)
	}
	return finish(ctx, h, res, env, ref.Metadata, contract.ServiceHandle{ServiceID: id, AdapterID: d.AdapterID, ServiceType: ref.ServiceType, Ownership: contract.OwnershipCaller}, opts)
}

// finish checks the host's report and builds the Service; on a bad report
// the host is stopped.
func finish(ctx context.Context, h *runtime.ServiceHost, res hostproto.ServiceStartResult, refEnv map[string]string, refMeta map[string]any, handle contract.ServiceHandle, opts Options) (*Service, error) {
	env := maps.Clone(refEnv)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, res.CredentialEnv)
	secrets := slices.Collect(maps.Values(env))
	if f := checkReport(res.Connection, res.Metadata, secrets); f != nil {
		_ = h.Stop(context.WithoutCancel(ctx))
		return nil, &contract.RuntimeError{Failure: contract.Failure{
			Stage: contract.StagePrepare, Code: f.Code, Path: f.Path,
			Message: "the adapter reported an unsafe service connection: " + f.Message,
		}}
	}
	md := clone(refMeta)
	if len(res.Metadata) > 0 {
		if md == nil {
			md = map[string]any{}
		}
		maps.Copy(md, res.Metadata)
	}
	handle.Connection = clone(res.Connection)
	handle.Metadata = md
	key := opts.Runtime.Key
	if key == nil {
		key = runtime.NewBindingKey()
	}
	handle.ServiceBinding = bind(key, &handle)
	s := &Service{handle: handle, host: h, key: key, env: env, status: contract.ServiceActive}
	return s, nil
}

// clone deep-copies a JSON object, so that no caller can change what a
// service reports or hands to its runtimes.
func clone(m map[string]any) map[string]any { return jsonvalue.CloneObject(m) }

const bindingPrefix = "fabric-service-binding-"

// bind computes the service_binding: an HMAC-SHA256 with the client's
// binding key over the handle's identity fields, domain-separated from
// runtime bindings.
func bind(k runtime.BindingKey, h *contract.ServiceHandle) string {
	m := hmac.New(sha256.New, k)
	for _, f := range []string{"fabric.service", h.ServiceID, h.AdapterID, h.ServiceType, h.Ownership} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	return bindingPrefix + hex.EncodeToString(m.Sum(nil)[:20])
}

// ID is the service id.
func (s *Service) ID() string { return s.handle.ServiceID }

// Handle returns the service's handle with its current status. Its
// connection never holds a credential value.
func (s *Service) Handle() contract.ServiceHandle {
	h := s.handle
	h.Connection = clone(h.Connection)
	h.Metadata = clone(h.Metadata)
	h.Status = s.Status()
	return h
}

// VerifyHandle checks that h is this service's handle, unforged.
func (s *Service) VerifyHandle(h *contract.ServiceHandle) error {
	if h.ServiceID != s.handle.ServiceID || !strings.HasPrefix(h.ServiceBinding, bindingPrefix) ||
		!hmac.Equal([]byte(h.ServiceBinding), []byte(bind(s.key, h))) {
		return stateErr(contract.StageStart, CodeHandleMismatch, "the handle does not belong to this service or was altered", false, nil)
	}
	return nil
}

// Status is active, releasing, released or failed. A service whose host
// exited while it was active is failed.
func (s *Service) Status() string {
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	if st == contract.ServiceActive && s.hostExited() {
		return contract.ServiceFailed
	}
	return st
}

func (s *Service) hostExited() bool {
	select {
	case <-s.host.Exited():
		return true
	default:
		return false
	}
}

// HostPid is the process id (and process group id) of the service host
// (for an attachment, of the attachment host).
func (s *Service) HostPid() int { return s.host.Pid() }

// Ownership is fabric_owned or caller_owned.
func (s *Service) Ownership() string { return s.handle.Ownership }

func stateErr(stage, code, msg string, retryable bool, md map[string]any) error {
	return &contract.StateError{Failure: contract.Failure{Stage: stage, Code: code, Message: msg, Retryable: retryable, Metadata: md}}
}

// Acquire reserves the service for a runtime of adapter id about to
// start: the adapters must match and the service must be active (the
// caller refuses a config that enables interfaces with RejectInterfaces).
// It returns the binding for runtime.Options.Service and done, which the
// caller must call once with the started runtime, or with nil if the
// start failed.
func (s *Service) Acquire(id string) (*runtime.ServiceBinding, func(User), error) {
	if id != s.handle.AdapterID {
		return nil, nil, capErr(contract.StageStart, CodeAdapterMismatch, "harness.adapter_id", fmt.Sprintf("service %s belongs to adapter %s, the runtime's config selects %s", s.handle.ServiceID, s.handle.AdapterID, id), id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st := s.status; {
	case st == contract.ServiceReleasing || st == contract.ServiceReleased:
		return nil, nil, stateErr(contract.StageStart, CodeReleased, fmt.Sprintf("service %s is %s", s.handle.ServiceID, st), false, nil)
	case st == contract.ServiceFailed || s.hostExited():
		return nil, nil, stateErr(contract.StageStart, CodeFailed, fmt.Sprintf("service %s has failed", s.handle.ServiceID), false, nil)
	}
	s.pending++
	b := &runtime.ServiceBinding{
		Service: hostproto.ServiceBinding{
			ServiceID: s.handle.ServiceID, AdapterID: s.handle.AdapterID, ServiceType: s.handle.ServiceType,
			Ownership: s.handle.Ownership, Connection: clone(s.handle.Connection), Metadata: clone(s.handle.Metadata),
		},
		Env: maps.Clone(s.env),
	}
	var once sync.Once
	done := func(u User) {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.pending--
			if u != nil {
				s.users = append(s.users, u)
			}
		})
	}
	return b, done, nil
}

// inUse drops stopped users and lists the others. Called with mu held.
func (s *Service) inUse() []string {
	s.users = slices.DeleteFunc(s.users, func(u User) bool { return u.State() == runtime.StateStopped })
	ids := make([]string, 0, len(s.users))
	for _, u := range s.users {
		ids = append(ids, u.ID())
	}
	return ids
}

// Release stops a Fabric-owned service's host, or ends the attachment to
// a caller-owned service (which keeps running). It is refused with a
// *contract.StateError (service_in_use) while a runtime started with the
// service is not stopped, or starting. Once released, later calls return
// nil; a concurrent call waits for the first.
func (s *Service) Release(ctx context.Context) error {
	s.mu.Lock()
	switch s.status {
	case contract.ServiceReleased:
		s.mu.Unlock()
		return nil
	case contract.ServiceFailed:
		err := s.releaseErr
		s.mu.Unlock()
		return err
	case contract.ServiceReleasing:
		done := s.releaseDone
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.releaseErr
	}
	if ids := s.inUse(); len(ids) > 0 || s.pending > 0 {
		s.mu.Unlock()
		msg := fmt.Sprintf("service %s is in use by %d runtime(s); stop them first", s.handle.ServiceID, len(ids))
		if len(ids) == 0 {
			msg = fmt.Sprintf("service %s is in use by a runtime that is starting", s.handle.ServiceID)
		}
		return stateErr(contract.StageRelease, CodeInUse, msg, true, map[string]any{"runtime_ids": ids})
	}
	s.status = contract.ServiceReleasing
	s.releaseDone = make(chan struct{})
	s.mu.Unlock()

	err := s.host.Stop(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.status, s.releaseErr = contract.ServiceFailed, err
	} else {
		s.status = contract.ServiceReleased
	}
	close(s.releaseDone)
	return err
}
