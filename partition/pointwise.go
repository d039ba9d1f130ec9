package partition

// PointwiseTargets is the half-open range [first, end) of downstream
// subtasks that upstream subtask i feeds on a pointwise edge (FORWARD,
// RESCALE) with s upstream and t downstream subtasks, as Flink's
// EdgeManagerBuildUtil.connectPointwise pairs them (flink-semantics.md §2):
//
//   - s == t: i feeds i;
//   - s < t: i feeds [(i*t + s - 1)/s, ((i+1)*t + s - 1)/s);
//   - s > t: i feeds the one downstream subtask j with
//     j*s/t <= i < (j+1)*s/t, that is j = ((i+1)*t - 1)/s.
//
// Example: s=2, t=3: 0 feeds {0, 1}, 1 feeds {2}. Requires s, t >= 1 and
// 0 <= i < s.
func PointwiseTargets(upstream, s, t int) (first, end int) {
	i := upstream
	switch {
	case s == t:
		return i, i + 1
	case s < t:
		return (i*t + s - 1) / s, ((i+1)*t + s - 1) / s
	default:
		j := ((i+1)*t - 1) / s
		return j, j + 1
	}
}

// PointwiseSources is the half-open range [first, end) of upstream
// subtasks that feed downstream subtask j on a pointwise edge with s
// upstream and t downstream subtasks (Flink
// EdgeManagerBuildUtil.connectPointwise; flink-semantics.md §2):
//
//   - s == t: j reads j;
//   - s > t: j reads [j*s/t, (j+1)*s/t);
//   - s < t: j reads the one upstream subtask i = j*s/t.
//
// Example: s=3, t=2: 0 reads {0}, 1 reads {1, 2}. Requires s, t >= 1 and
// 0 <= j < t.
func PointwiseSources(downstream, s, t int) (first, end int) {
	j := downstream
	switch {
	case s == t:
		return j, j + 1
	case s > t:
		return j * s / t, (j + 1) * s / t
	default:
		i := j * s / t
		return i, i + 1
	}
}
