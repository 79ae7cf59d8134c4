package adaptertest

import (
	"slices"
	"sync"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
)

func TestEvents(t *testing.T) {
	var e Events
	if len(e.List()) != 0 || len(e.Kinds()) != 0 {
		t.Fatal("the zero value holds events")
	}
	e.Emit(adapterkit.Event{Kind: "status", Message: "first"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { e.Emit(adapterkit.Event{Kind: "output_delta"}) })
	}
	wg.Wait()
	kinds := e.Kinds()
	if len(kinds) != 9 || kinds[0] != "status" || slices.Index(kinds[1:], "status") >= 0 {
		t.Errorf("Kinds = %v, want status then 8 output_delta", kinds)
	}
	list := e.List()
	list[0].Message = "changed"
	if e.List()[0].Message != "first" {
		t.Error("List returned the recorder's own slice")
	}
}
