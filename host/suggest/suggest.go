// Package suggest finds the word a user probably meant: the known name
// nearest a misspelt one, for "did you mean" in messages about pipeline
// keys, operator ids and host settings.
package suggest

import "strings"

// Closest returns the word of known within edit distance 2 of w (compared
// in lower case), the nearest first; "" when none is that close.
func Closest(w string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(w), k); dist < bestD {
			best, bestD = k, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b; 99 past 64 bytes,
// so that a hostile name costs nothing.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
