package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

//go:embed web
var webFS embed.FS

// pages are the parsed templates and the static files.
type pages struct {
	tmpl   map[string]*template.Template
	static http.Handler
}

var pageNames = []string{"signin", "deployment", "agent", "access", "notfound"}

func loadPages() (*pages, error) {
	funcs := template.FuncMap{
		"since":  since,
		"millis": func(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05") },
		"short":  func(s string) string { return shortID(s) },
		"stateClass": func(s string) string {
			switch s {
			case supervisorproto.StateRunning, "active", "succeeded", "completed", "passed", "serving":
				return "ok"
			case supervisorproto.StateFailed, supervisorproto.StateBlocked, "revoked", "expired", "cancelled":
				return "bad"
			}
			return "warn"
		},
		"deref": func(p *uint64) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprint(*p)
		},
		"cost": func(p *float64) string {
			if p == nil {
				return "—"
			}
			return fmt.Sprintf("$%.4f", *p)
		},
		"time": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"json": func(v any) (template.JS, error) {
			b, err := json.Marshal(v)
			return template.JS(b), err
		},
	}
	p := &pages{tmpl: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		p.tmpl[name] = t
	}
	sub, err := fs.Sub(webFS, "web/static")
	if err != nil {
		return nil, err
	}
	p.static = http.StripPrefix("/static/", http.FileServerFS(sub))
	return p, nil
}

// render writes the named page.
func (p *pages) render(w http.ResponseWriter, _ *http.Request, status int, name string, data any) {
	var b bytes.Buffer
	if err := p.tmpl[name].Execute(&b, map[string]any{"Page": name, "Data": data}); err != nil {
		http.Error(w, "console: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func since(ms int64) string {
	if ms == 0 {
		return "—"
	}
	d := time.Since(time.UnixMilli(ms)).Round(time.Second)
	return d.String()
}

func shortID(s string) string {
	if len(s) == 64 && !strings.Contains(s, "-") {
		return s[:12] // a digest
	}
	if i := strings.LastIndexByte(s, '-'); i > 0 && len(s)-i > 9 {
		return s[:i+9]
	}
	return s
}

// routes are the console's pages and API.
func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /static/", c.guard(true, c.pages.static.ServeHTTP))
	mux.HandleFunc("POST /session", c.guard(true, c.signIn))
	mux.HandleFunc("POST /session/end", c.guard(false, c.signOut))
	mux.HandleFunc("GET /{$}", c.guard(false, c.deploymentPage))
	mux.HandleFunc("GET /agents/{name}", c.guard(false, c.agentPage))
	mux.HandleFunc("GET /access", c.guard(false, c.accessPage))
	mux.HandleFunc("GET /api/status", c.guard(false, c.apiStatus))
	mux.HandleFunc("GET /api/agents/{name}/events", c.guard(false, c.apiEvents))
	mux.HandleFunc("POST /api/access", c.guard(false, c.apiAccess))
	mux.HandleFunc("POST /api/chat", c.guard(false, c.apiChat))
	mux.HandleFunc("/", c.guard(false, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			refuse(w, r, http.StatusNotFound, "not_found", "no such console API: "+r.URL.Path)
			return
		}
		c.pages.render(w, r, http.StatusNotFound, "notfound", r.URL.Path)
	}))
	return mux
}

// sandboxView groups agents by sandbox for the deployment page.
type sandboxView struct {
	Name   string
	Agents []supervisorproto.AgentStatus
}

// eventView is one lifecycle event of a resource.
type eventView struct {
	Resource string
	supervisorproto.Event
}

type deploymentView struct {
	Status    supervisorproto.Status
	Sandboxes []sandboxView
	Events    []eventView
	Gateways  []supervisorproto.ServiceStatus
}

func (c *Console) deploymentPage(w http.ResponseWriter, r *http.Request) {
	st := c.sup.Status()
	v := deploymentView{Status: st}
	by := map[string]int{}
	for _, a := range st.Agents {
		i, ok := by[a.Sandbox]
		if !ok {
			i = len(v.Sandboxes)
			by[a.Sandbox] = i
			v.Sandboxes = append(v.Sandboxes, sandboxView{Name: a.Sandbox})
		}
		v.Sandboxes[i].Agents = append(v.Sandboxes[i].Agents, a)
		for _, e := range a.Events {
			v.Events = append(v.Events, eventView{Resource: "agent/" + a.Name, Event: e})
		}
	}
	for _, s := range st.Services {
		for _, e := range s.Events {
			v.Events = append(v.Events, eventView{Resource: s.ID, Event: e})
		}
		if s.Access != nil {
			v.Gateways = append(v.Gateways, s)
		}
	}
	sort.SliceStable(v.Events, func(i, j int) bool { return v.Events[i].AtMillis > v.Events[j].AtMillis })
	if len(v.Events) > 25 {
		v.Events = v.Events[:25]
	}
	c.pages.render(w, r, http.StatusOK, "deployment", v)
}

type agentView struct {
	Status supervisorproto.Status
	Agent  supervisorproto.AgentStatus
	Turns  []supervisorproto.Turn // newest first
	Served []string               // the gateways serving the agent
}

func (c *Console) agentPage(w http.ResponseWriter, r *http.Request) {
	st := c.sup.Status()
	name := r.PathValue("name")
	for _, a := range st.Agents {
		if a.Name != name {
			continue
		}
		v := agentView{Status: st, Agent: a}
		for i := len(a.Turns) - 1; i >= 0; i-- {
			v.Turns = append(v.Turns, a.Turns[i])
		}
		for _, s := range st.Services {
			if s.Access != nil && contains(s.Agents, name) {
				v.Served = append(v.Served, s.ID)
			}
		}
		c.pages.render(w, r, http.StatusOK, "agent", v)
		return
	}
	c.pages.render(w, r, http.StatusNotFound, "notfound", "agent "+name)
}

type gatewayView struct {
	Service supervisorproto.ServiceStatus
	Grants  []supervisorproto.AccessKey // newest first
}

type accessView struct {
	Status   supervisorproto.Status
	Gateways []gatewayView
}

func (c *Console) accessPage(w http.ResponseWriter, r *http.Request) {
	st := c.sup.Status()
	v := accessView{Status: st}
	for _, s := range st.Services {
		if s.Access == nil {
			continue
		}
		g := gatewayView{Service: s, Grants: append([]supervisorproto.AccessKey{}, s.Access.Grants...)}
		sort.SliceStable(g.Grants, func(i, j int) bool { return g.Grants[i].CreatedAt.After(g.Grants[j].CreatedAt) })
		v.Gateways = append(v.Gateways, g)
	}
	c.pages.render(w, r, http.StatusOK, "access", v)
}

func (c *Console) apiStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, c.sup.Status())
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
