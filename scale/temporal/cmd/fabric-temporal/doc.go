// Command fabric-temporal runs fabric batches on Temporal: `worker` hosts
// trials for one or more quota keys, `run` submits a batch and follows it
// to its report, `cancel` cancels a submitted batch. `fabric batch run
// --backend temporal` and `fabric batch worker` execute it.
//
// It must never pass a trial's bulk (results, events) through Temporal:
// the batch directory, on a filesystem every host shares, is the store.
package main
