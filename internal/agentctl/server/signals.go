package server

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// UntilSignal runs serve until SIGTERM or SIGINT: the first signal
// cancels serve's context (a clean shutdown), a second calls force (cut
// the shutdown short). It returns serve's result once serve returned.
func UntilSignal(ctx context.Context, log *slog.Logger, serve func(context.Context) Result, force func()) Result {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case sig := <-sigs:
				log.Info("signal", "signal", sig.String(), "count", n)
				if n == 1 {
					cancel()
				} else {
					force()
				}
			}
		}
	}()
	res := serve(ctx)
	close(done)
	<-watched
	return res
}
