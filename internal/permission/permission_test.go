package permission

import "testing"

func TestSetDecides(t *testing.T) {
	var s, other Set
	ch := s.Add("a")
	other.Add("c")
	if s.Decide("c", "allow") {
		t.Error("one set decided another set's request")
	}
	if !s.Decide("a", "allow") {
		t.Fatal("pending request refused its decision")
	}
	if got := <-ch; got != "allow" {
		t.Errorf("decision %q", got)
	}
}
