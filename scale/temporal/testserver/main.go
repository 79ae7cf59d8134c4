// Command testserver runs Temporal's in-process test server
// (go.temporal.io/server/temporaltest: SQLite in memory, a random loopback
// port) for the tests of scale/temporal, with Fabric's search attributes
// registered and one partition per task queue. It prints {"address": ..., "namespace": ...} on one line of
// stdout once the server is up and stops when stdin closes or on SIGTERM.
//
// It is a module of its own because the server's OpenTelemetry pins and
// Fabric's cannot share one build: it must never import Fabric.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
)

// searchAttributes are the ones Fabric's TrialWorkflow sets.
var searchAttributes = map[string]enumspb.IndexedValueType{
	"FabricBatch":      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"FabricTask":       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"FabricConfig":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"FabricRepeat":     enumspb.INDEXED_VALUE_TYPE_INT,
	"FabricOutcome":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"FabricErrorClass": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"FabricCostUSD":    enumspb.INDEXED_VALUE_TYPE_DOUBLE,
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

func run() error {
	// One partition per task queue: a queue's activity rate limit
	// (TaskQueueActivitiesPerSecond) is then one token bucket, so the
	// tests can check that starts are spaced. With the default four
	// partitions the rate holds on average, with a burst of one start per
	// partition.
	one := []dynamicconfig.ConstrainedValue{{Value: 1}}
	ts := temporaltest.NewServer(temporaltest.WithBaseServerOptions(temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():      one,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key():     one,
	})))
	defer ts.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ts.GetDefaultClient().OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		SearchAttributes: searchAttributes, Namespace: ts.GetDefaultNamespace(),
	}); err != nil {
		return fmt.Errorf("register search attributes: %w", err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(map[string]string{"address": ts.GetFrontendHostPort(), "namespace": ts.GetDefaultNamespace()}); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	eof := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(eof) }()
	select {
	case <-stop:
	case <-eof:
	}
	return nil
}
