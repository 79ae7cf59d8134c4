package temporal

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Activity names (registered by Activities.Register).
const (
	activityPlanBatch = "PlanBatch"
	activityPlanPage  = "PlanPage"
	activityRunTrial  = "RunTrial"
)

// BatchWorkflow runs every pending trial of a batch as a child
// TrialWorkflow, at most the spec's limits.concurrency at once. It starts
// ChildrenPerRun children per run, waits for them, and continues as new
// with the offset into the plan. Cancelling it cancels every running trial
// and waits until each has committed its cancelled record.
func BatchWorkflow(ctx workflow.Context, st BatchState) (BatchProgress, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           BatchQueue,
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &sdktemporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	})
	if st.Plan == nil {
		var plan Plan
		if err := workflow.ExecuteActivity(actx, activityPlanBatch, st.Ref).Get(ctx, &plan); err != nil {
			return st.Result, err
		}
		st.Plan = &plan
		st.Result.Planned = plan.Count
	}
	perRun := ChildrenPerRun
	if st.ChildrenPerRun > 0 {
		perRun = st.ChildrenPerRun
	}
	var page []PlannedTrial
	if st.Offset < st.Plan.Count {
		if err := workflow.ExecuteActivity(actx, activityPlanPage, st.Ref, *st.Plan, st.Offset, perRun).Get(ctx, &page); err != nil {
			return st.Result, err
		}
	}
	window := st.Plan.Concurrency
	if window < 1 {
		window = 1
	}
	if st.Result.Outcomes == nil {
		st.Result.Outcomes = map[string]int{}
	}
	sel := workflow.NewSelector(ctx)
	inFlight := 0
	next := 0
	for next < len(page) || inFlight > 0 {
		for inFlight < window && next < len(page) && ctx.Err() == nil {
			t := page[next]
			next++
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID:            TrialWorkflowID(st.Ref.Name, t.ID),
				TaskQueue:             BatchQueue,
				WaitForCancellation:   true,
				ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
				WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
				TypedSearchAttributes: sdktemporal.NewSearchAttributes(
					SABatch.ValueSet(st.Ref.Name), SATask.ValueSet(t.Task),
					SAConfig.ValueSet(t.Config), SARepeat.ValueSet(int64(t.Repeat))),
			})
			f := workflow.ExecuteChildWorkflow(cctx, TrialWorkflow, TrialRef{Batch: st.Ref, Trial: t, Plan: *st.Plan})
			inFlight++
			sel.AddFuture(f, func(f workflow.Future) {
				inFlight--
				var sum TrialSummary
				err := f.Get(ctx, &sum)
				switch {
				case err == nil:
					st.Result.Outcomes[sum.Outcome]++
				case sdktemporal.IsWorkflowExecutionAlreadyStartedError(err):
					st.Result.Existing++
				case isCanceled(err):
					st.Result.Outcomes["cancelled"]++
				default:
					st.Result.Failed++
					workflow.GetLogger(ctx).Warn("trial workflow ended without a record", "trial", t.ID, "error", err)
				}
			})
			st.Result.Started++
		}
		if ctx.Err() != nil && next < len(page) {
			next = len(page) // cancelled: start nothing more
		}
		if inFlight == 0 {
			break
		}
		sel.Select(ctx)
	}
	if err := ctx.Err(); err != nil {
		return st.Result, sdktemporal.NewCanceledError(st.Result)
	}
	st.Offset += len(page)
	if st.Offset < st.Plan.Count {
		return st.Result, workflow.NewContinueAsNewError(ctx, BatchWorkflow, st)
	}
	return st.Result, nil
}

// TrialWorkflow runs one trial: one RunTrial activity on the trial's quota
// queue, retried for lost hosts and for the error classes the spec
// retries. At the end it upserts the outcome search attributes.
func TrialWorkflow(ctx workflow.Context, ref TrialRef) (TrialSummary, error) {
	maxAttempts := ref.Plan.MaxAttempts
	if maxAttempts < 1 {
		maxAttempts = 1
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           TrialQueue(ref.Trial.QuotaKey),
		StartToCloseTimeout: ref.Plan.startToClose(),
		HeartbeatTimeout:    ref.Batch.heartbeatTimeout(),
		WaitForCancellation: true,
		RetryPolicy: &sdktemporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    int32(maxAttempts + hostLossAttempts),
		},
	})
	ref.SinceMillis = workflow.Now(ctx).UnixMilli()
	var sum TrialSummary
	err := workflow.ExecuteActivity(actx, activityRunTrial, ref).Get(ctx, &sum)
	outcome, class := sum.Outcome, sum.ErrorClass
	if err != nil {
		if isCanceled(err) || ctx.Err() != nil {
			outcome = "cancelled"
		} else {
			outcome, class = "error", "fabric"
		}
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	upd := []sdktemporal.SearchAttributeUpdate{SAOutcome.ValueSet(outcome)}
	if class != "" {
		upd = append(upd, SAErrorClass.ValueSet(class))
	}
	if sum.CostUSD != nil {
		upd = append(upd, SACostUSD.ValueSet(*sum.CostUSD))
	}
	if uerr := workflow.UpsertTypedSearchAttributes(dctx, upd...); uerr != nil && err == nil {
		err = uerr
	}
	return sum, err
}

func isCanceled(err error) bool {
	var ce *sdktemporal.CanceledError
	return errors.As(err, &ce)
}
