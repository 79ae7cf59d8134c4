// Package browsertest drives a headless Chromium from Go tests, over the
// Chrome DevTools Protocol (through github.com/chromedp/chromedp, which
// talks to the browser on a pipe), so that live tests can open a harness's
// browser interface the way a person would: load a page, type, click, read
// what it shows and keep a screenshot.
//
// The browser is the system's Chromium (Debian's /usr/bin/chromium, or
// $FABRIC_CHROMIUM). Every browser gets a private profile directory, is
// kept off the network beyond loopback (a dead proxy for every other
// host, background networking and component updates off) and is killed
// with its whole process tree when the test ends.
//
// What the package must never do: download a browser, reach a host other
// than loopback, leave a browser process or profile directory behind, or
// be imported by non-test code of the core.
package browsertest
