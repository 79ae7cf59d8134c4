// Package widget names the fixture adapter's harness and id.
package widget

var widgetHost = "acme.widget"
