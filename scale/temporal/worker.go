package temporal

import (
	"errors"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkerOptions configure the workers of one host.
type WorkerOptions struct {
	// Queues are the quota keys whose trial queues (fabric-trials/<key>)
	// this host polls; default "default".
	Queues []string
	// Slots is how many trials run at once on each trial queue (default 4).
	Slots int
	// QueueRPS, when above 0, caps the activity starts per second of each
	// trial queue, across all its workers (TaskQueueActivitiesPerSecond).
	QueueRPS float64
}

// Workers are the started workers of one host.
type Workers struct{ ws []worker.Worker }

// StartWorkers starts a worker on BatchQueue (the workflows and planning
// activities) and one per trial queue (RunTrial), sharing c.
func StartWorkers(c client.Client, acts *Activities, o WorkerOptions) (*Workers, error) {
	slots := o.Slots
	if slots < 1 {
		slots = 4
	}
	queues := o.Queues
	if len(queues) == 0 {
		queues = []string{"default"}
	}
	bw := worker.New(c, BatchQueue, worker.Options{MaxConcurrentActivityExecutionSize: 4})
	bw.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: "BatchWorkflow"})
	bw.RegisterWorkflowWithOptions(TrialWorkflow, workflow.RegisterOptions{Name: "TrialWorkflow"})
	acts.RegisterPlanning(bw)
	ws := &Workers{ws: []worker.Worker{bw}}
	seen := map[string]bool{}
	for _, key := range queues {
		q := TrialQueue(key)
		if seen[q] {
			continue
		}
		seen[q] = true
		tw := worker.New(c, q, worker.Options{
			MaxConcurrentActivityExecutionSize: slots,
			TaskQueueActivitiesPerSecond:       o.QueueRPS,
		})
		acts.RegisterTrials(tw)
		ws.ws = append(ws.ws, tw)
	}
	for i, w := range ws.ws {
		if err := w.Start(); err != nil {
			for _, s := range ws.ws[:i] {
				s.Stop()
			}
			return nil, errors.Join(errors.New("start worker"), err)
		}
	}
	return ws, nil
}

// Stop stops every worker; running trials see their context end and are
// left uncommitted for another host.
func (w *Workers) Stop() {
	for _, x := range w.ws {
		x.Stop()
	}
}
