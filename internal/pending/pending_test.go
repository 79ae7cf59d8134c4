package pending

import "testing"

func TestTable(t *testing.T) {
	var tb Table[string]
	if tb.Deliver("unknown", "x") {
		t.Error("a reply for an unknown id was delivered")
	}
	a := tb.Add("a")
	if !tb.Deliver("a", "first") {
		t.Fatal("the reply to a waiting request was not delivered")
	}
	if tb.Deliver("a", "second") {
		t.Error("a second reply for the same id was delivered")
	}
	if got := <-a; got != "first" {
		t.Errorf("reply %q, want first", got)
	}
	tb.Add("b")
	tb.Remove("b")
	if tb.Deliver("b", "late") {
		t.Error("a reply for a removed request was delivered")
	}
}
