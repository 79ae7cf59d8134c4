package cli

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/modelstub"
)

func (a *app) modelCommand() *cobra.Command {
	return a.group(&cobra.Command{
		Use:   "model",
		Short: "The scripted model endpoint for offline runs and tests",
	}, func(cmd *cobra.Command) {
		cmd.AddCommand(a.modelServeCommand(), a.modelProxyCommand())
	})
}

// modelServeInfo is the one JSON line `fabric model serve` prints once it
// listens.
type modelServeInfo struct {
	URL              string `json:"url"`
	OpenAIBaseURL    string `json:"openai_base_url"`
	AnthropicBaseURL string `json:"anthropic_base_url"`
	GeminiBaseURL    string `json:"gemini_base_url"`
	RequestsURL      string `json:"requests_url"`
}

func (a *app) modelServeCommand() *cobra.Command {
	var addr, scriptFile, keyEnv string
	var allowRemote, quiet bool
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:0] [--script FILE] [--expect-key-env NAME]",
		Short: "Serve the scripted model endpoint (OpenAI, Anthropic and Gemini APIs) until interrupted",
		Long: "Serve the scripted model endpoint on a loopback address until SIGINT or SIGTERM.\n" +
			"Once listening it prints one JSON line with url, openai_base_url, anthropic_base_url, gemini_base_url and requests_url.\n" +
			"Without --script every request gets a short fixed text. With --expect-key-env NAME, API requests must carry the value of $NAME as their key.\n" +
			"One log line per request goes to stderr (never a key value) unless --quiet. Recorded requests are at GET <url>/_requests.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !allowRemote && !isLoopbackAddr(addr) {
				return &exitError{code: ExitUsage, err: fmt.Errorf("--addr %s is not a loopback address; pass --allow-remote to serve beyond this machine", addr)}
			}
			var script *modelstub.Script
			if scriptFile != "" {
				s, err := modelstub.LoadScript(scriptFile)
				if err != nil {
					return a.failure(err)
				}
				script = s
			}
			var opts []modelstub.Option
			if keyEnv != "" {
				key := os.Getenv(keyEnv)
				if key == "" {
					return a.failure(fmt.Errorf("--expect-key-env: environment variable %s is not set or empty", keyEnv))
				}
				opts = append(opts, modelstub.WithExpectKey(key))
			}
			if !quiet {
				opts = append(opts, modelstub.WithLogger(slog.New(slog.NewJSONHandler(a.stdio.Err, nil))))
			}
			srv, err := modelstub.NewServer(addr, script, opts...)
			if err != nil {
				return a.failure(fmt.Errorf("model serve: %w", err))
			}
			defer srv.Close()
			line, err := json.Marshal(modelServeInfo{
				URL:              srv.URL(),
				OpenAIBaseURL:    srv.OpenAIBaseURL(),
				AnthropicBaseURL: srv.AnthropicBaseURL(),
				GeminiBaseURL:    srv.GeminiBaseURL(),
				RequestsURL:      srv.URL() + "/_requests",
			})
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(a.stdio.Out, "%s\n", line); err != nil {
				return err
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	cmd.Flags().StringVar(&scriptFile, "script", "", "YAML script of scripted replies (default: a fixed text for every request)")
	cmd.Flags().StringVar(&keyEnv, "expect-key-env", "", "name of the environment variable holding the API key requests must carry")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow listening on a non-loopback address")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not log requests to stderr")
	return cmd
}

// isLoopbackAddr reports whether host:port names only this machine.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
