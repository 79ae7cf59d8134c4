// Package supervisorproto is the control protocol of a deployment's
// supervisor (fabric serve, which runs in fabric-serve): the files it
// keeps in its state directory, the actions of a deploy request
// (agentctl.Request.Action on its Unix socket), their payloads and
// answers, the status document, and the states, outcomes and error codes
// they carry. The supervisor and its clients (fabric deploy, fabric
// packages audit --apply, the console) share it, so that a client links
// types and constants, not the supervisor.
package supervisorproto
