package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestSplitsLinesIntoWords(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{},
		sdktest.JSON(`{"line":"To be, or not to be: that is the question."}`).WithTime(9),
		sdktest.JSON(`{"line":"  Don't  PANIC!\t— “Ça va?” "}`),
		sdktest.JSON(`{"line":"... !!"}`),
		sdktest.JSON(`{"text":"no line field"}`))
	var words []string
	for _, r := range res.Main() {
		words = append(words, r.Value["word"].(string))
		if len(r.Value) != 1 {
			t.Fatalf("a word record has one field: %v", r.Value)
		}
	}
	want := []string{"to", "be", "or", "not", "to", "be", "that", "is", "the", "question", "don't", "panic", "ça", "va"}
	if !reflect.DeepEqual(words, want) {
		t.Fatalf("got  %q\nwant %q", words, want)
	}
	if first := res.Main()[0]; first.Time != 9 {
		t.Fatalf("words carry the line's event time: %+v", first)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
