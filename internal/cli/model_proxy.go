package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/cliflag"

	"github.com/fabric-runtime/fabric/internal/modelproxy"
)

// modelProxyGrant is the JSON line `fabric model proxy` prints once per
// --grant: the only time the placeholder is shown.
type modelProxyGrant struct {
	Route       string `json:"route"`
	Agent       string `json:"agent"`
	Placeholder string `json:"placeholder"`
	BaseURL     string `json:"base_url"`
}

// modelProxyStatus is the line printed once serving, and again at exit
// with the usage counts.
type modelProxyStatus struct {
	Status string                                 `json:"status"`
	URL    string                                 `json:"url"`
	Usage  map[string]map[string]modelproxy.Usage `json:"usage,omitempty"`
}

func (a *app) modelProxyCommand() *cobra.Command {
	var listen string
	var routes, credEnvs, grants []string
	var allowRemote, quiet bool
	cmd := &cobra.Command{
		Use:   "proxy --route NAME=API,BASE_URL[,MODEL] [--credential-env NAME=ENVVAR] [--grant ROUTE:AGENT]...",
		Short: "Serve the brokered model proxy: agents get placeholder keys, the proxy holds the real ones",
		Long: "Serve the brokered model proxy on a loopback address until SIGINT or SIGTERM.\n" +
			"Each --route names an upstream: API is openai-responses, openai-chat-completions or anthropic-messages, BASE_URL the\n" +
			"URL its clients take (https://api.openai.com/v1, https://api.anthropic.com), MODEL (optional) replaces every request's model.\n" +
			"--credential-env NAME=ENVVAR reads route NAME's real key from $ENVVAR. Each --grant ROUTE:AGENT prints one JSON line\n" +
			"{route, agent, placeholder, base_url}: the agent sends the placeholder as its API key to base_url. Then a line\n" +
			"{\"status\":\"serving\",\"url\":...}; at exit {\"status\":\"stopped\",...,\"usage\":...}. One log line per request goes to\n" +
			"stderr (never a key) unless --quiet. docs/model-proxy.md has the details.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage := func(format string, args ...any) error {
				return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
			}
			if !allowRemote && !isLoopbackAddr(listen) {
				return usage("--listen %s is not a loopback address; pass --allow-remote to serve beyond this machine", listen)
			}
			if len(routes) == 0 {
				return usage("give at least one --route NAME=API,BASE_URL[,MODEL]")
			}
			parsed := map[string]modelproxy.Route{}
			var order []string
			for _, spec := range routes {
				name, rest, _ := strings.Cut(spec, "=")
				fields := strings.Split(rest, ",")
				if len(fields) < 2 || len(fields) > 3 {
					return usage("--route %q: want NAME=API,BASE_URL[,MODEL]", spec)
				}
				r := modelproxy.Route{API: fields[0], BaseURL: fields[1]}
				if len(fields) == 3 {
					r.Model = fields[2]
				}
				if _, dup := parsed[name]; dup {
					return usage("--route %s is given twice", name)
				}
				if err := modelproxy.CheckRoute(name, r); err != nil {
					return usage("--route: %v", err)
				}
				parsed[name] = r
				order = append(order, name)
			}
			for _, spec := range credEnvs {
				name, env, ok := strings.Cut(spec, "=")
				r, known := parsed[name]
				switch {
				case !ok || env == "":
					return usage("--credential-env %q: want NAME=ENVVAR", spec)
				case !known:
					return usage("--credential-env %s: no --route %s", spec, name)
				}
				r.Credential = os.Getenv(env)
				if r.Credential == "" {
					return a.failure(fmt.Errorf("--credential-env %s: environment variable %s is not set or empty", name, env))
				}
				parsed[name] = r
			}
			opts := modelproxy.Options{Addr: listen, AllowNonLoopback: allowRemote}
			if !quiet {
				opts.Logger = slog.New(slog.NewJSONHandler(a.stdio.Err, nil))
			}
			p, err := modelproxy.New(opts)
			if err != nil {
				return a.failure(err)
			}
			defer p.Close()
			for _, name := range order {
				p.SetRoute(name, parsed[name])
			}
			for _, spec := range grants {
				route, agent, ok := strings.Cut(spec, ":")
				if !ok {
					return usage("--grant %q: want ROUTE:AGENT", spec)
				}
				ph, err := p.Grant(route, agent)
				if err != nil {
					return usage("--grant %s: %v", spec, err)
				}
				if err := printLine(a.stdio.Out, modelProxyGrant{Route: route, Agent: agent, Placeholder: ph, BaseURL: p.BaseURL(route)}); err != nil {
					return err
				}
			}
			if err := printLine(a.stdio.Out, modelProxyStatus{Status: "serving", URL: p.URL()}); err != nil {
				return err
			}
			if err := p.Serve(cmd.Context()); err != nil {
				return a.failure(err)
			}
			return printLine(a.stdio.Out, modelProxyStatus{Status: "stopped", URL: p.URL(), Usage: p.Usage()})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", modelproxy.DefaultAddr, "address to listen on (port 0 picks a free one)")
	cliflag.Strings(cmd.Flags(), &routes, "route", "an upstream, NAME=API,BASE_URL[,MODEL] (repeatable)")
	cliflag.Strings(cmd.Flags(), &credEnvs, "credential-env", "NAME=ENVVAR: route NAME's real key is in $ENVVAR (repeatable)")
	cliflag.Strings(cmd.Flags(), &grants, "grant", "ROUTE:AGENT: issue AGENT a placeholder for ROUTE and print it once (repeatable)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow listening on a non-loopback address")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not log requests to stderr")
	return cmd
}

// printLine writes v as one compact JSON line.
func printLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
