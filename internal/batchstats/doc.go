// Package batchstats is the statistics of a batch of agent trials: pass@k
// and pass^k per task, the Wilson interval of a proportion, the
// task-clustered percentile bootstrap, mean and standard error over tasks,
// sample quantiles, exact paired tests (McNemar, sign test) and Holm's
// adjustment of several p-values.
//
// Every function is pure: it reads its arguments, returns numbers and
// keeps no state; randomness comes only from the seed it is given, so the
// same input gives the same bytes. The package must never do I/O, read
// the clock or log.
package batchstats
