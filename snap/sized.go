package snap

// The thresholds only large trees cross are unexported option fields,
// which snap's tests set. These setters reach the same fields for the
// tests of the packages over snap, which take over a small tree the path
// a large one takes. Production leaves them alone.

// WithLayerMost returns o with a layer save keeping at most n entries
// before it gives up with ErrLayerTooBig, instead of layerMost's 32,768.
// Zero is the production value. It is meant for tests.
func (o CreateOptions) WithLayerMost(n int) CreateOptions {
	o.layerMost = n
	return o
}

// WithSpillAt returns o with a restore's plan over what differs holding
// n entries before it is made a block at a time, instead of spillAt's
// 32,768. Zero is the production value. It is meant for tests.
func (o RestoreOptions) WithSpillAt(n int) RestoreOptions {
	o.spillAt = n
	return o
}
