package permission

import "testing"

func TestSet(t *testing.T) {
	var s Set
	if s.Decide("unknown", "allow") {
		t.Error("a request nobody asked took a decision")
	}
	ch := s.Add("a")
	if !s.Decide("a", "allow") {
		t.Fatal("pending request refused its decision")
	}
	if got := <-ch; got != "allow" {
		t.Errorf("decision %q", got)
	}
	if s.Decide("a", "deny") {
		t.Error("a decided request took a second decision")
	}
	s.Add("b")
	s.Remove("b")
	if s.Decide("b", "allow") {
		t.Error("a removed request took a decision")
	}
	var other Set
	other.Add("c")
	if s.Decide("c", "allow") {
		t.Error("one set decided another set's request")
	}
}
