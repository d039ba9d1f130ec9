package pipeline

// Operator returns the operator with the given id, or nil.
func (p *Pipeline) Operator(id string) *Operator {
	for _, op := range p.Operators {
		if op.ID == id {
			return op
		}
	}
	return nil
}

// OperatorConfig is the configuration a plugin operator opens with: its
// plugin's config: overlaid by the operator's own config: (operator keys
// win). It returns a new map; nil when neither gives any.
func (p *Pipeline) OperatorConfig(op *Operator) map[string]any {
	var base map[string]any
	if pl := p.Plugins[op.Plugin]; pl != nil {
		base = pl.Config
	}
	if len(base) == 0 && len(op.Config) == 0 {
		return nil
	}
	out := make(map[string]any, len(base)+len(op.Config))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range op.Config {
		out[k] = v
	}
	return out
}
