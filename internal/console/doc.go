// Package console is the Fabric console: the web pages a supervisor
// (fabric serve) serves for its deployment, on loopback only. It shows
// the deployment (agents by sandbox, state, health with the stages of the
// last check, restarts, runtime ids, integrations, attachments, brokered
// inference usage), one agent (its running turn live, resumed by sequence
// number after a reconnect; its last turns; links to its interfaces), and
// the access gateways (clients, grants; grant, rotate and revoke; a chat
// panel that talks to an agent through a gateway with a key the operator
// picks).
//
// Sign-in: every start of the console mints a token, kept in a 0600 file
// of the state directory (ConsoleTokenFile) and removed at stop. Scripts
// present it as "Authorization: Bearer"; a browser opens the URL that
// `fabric deploy console` prints, whose fragment carries the token (a
// fragment never reaches a server log), and the page exchanges it for an
// HttpOnly, SameSite=Strict session cookie. Requests from a non-loopback
// peer, with a Host that is not the console's loopback address, or with
// an Origin that is not the console's own, are refused.
//
// The pages are html/template and plain JS and CSS served from the
// binary; every action they take is also a CLI verb (fabric deploy
// access grant|rotate|revoke, any Responses client for the chat). The
// console never stores, logs or prints the token, a session or an access
// key.
package console
