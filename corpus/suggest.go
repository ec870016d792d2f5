package corpus

import (
	"fmt"

	"github.com/incidentlib/incidentlib"
)

// didYouMean returns ` (did you mean "x"?)` naming the closest candidate, or
// "" when none is close enough to be a plausible typo.
func didYouMean(got string, candidates []string) string {
	if best, ok := incidentlib.Nearest(got, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}
