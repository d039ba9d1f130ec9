package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"memory-pages", "call-timeout", "cache-dir", "key-by"}
	for w, want := range map[string]string{
		"memry-pages": "memory-pages", "Call-Timeout": "call-timeout", "cache-dr": "cache-dir",
		"keyby": "key-by", "partition": "", "": "",
	} {
		if got := Closest(w, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", w, got, want)
		}
	}
}
