// Package jobplugins is what a job does with its pipeline's plugins before
// it runs, the pipeline-aware side of host/plugin: it loads them into the
// plugin.Set a run uses (NewSet: paths relative to the pipeline, grants,
// names, edge configs), holds the pipeline's use of each to what the plugin
// describes of itself (CheckUses, also what lint reports) and the job's
// plugin instances to its memory budget (CheckJobMemory). host/plugin
// itself knows modules and instances, not pipelines.
package jobplugins
