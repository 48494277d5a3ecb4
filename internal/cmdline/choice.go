package cmdline

import "flag"

// Choice is the value of a string flag whose values form a closed set (--tier minimal,
// balanced or aggressive): the flag's registration names the set, so shell completion offers
// it and no second list of the flag's values is kept beside it. Set takes any string: the
// command checks the value and says what it takes, in its own words and with its own hint.
type Choice struct {
	p      *string
	values []string
	list   bool
}

// ChoiceVar defines a string flag with the default def, stored in p, that takes one of values.
func ChoiceVar(fs *flag.FlagSet, p *string, name, def string, values []string, usage string) {
	*p = def
	fs.Var(&Choice{p: p, values: values}, name, usage)
}

// ChoiceListVar is ChoiceVar for a flag that takes a comma-separated list of values
// (--agents claude,codex).
func ChoiceListVar(fs *flag.FlagSet, p *string, name, def string, values []string, usage string) {
	*p = def
	fs.Var(&Choice{p: p, values: values, list: true}, name, usage)
}

func (c *Choice) String() string {
	if c == nil || c.p == nil { // (the flag package makes a zero Choice to learn its zero value)
		return ""
	}
	return *c.p
}

func (c *Choice) Set(v string) error { *c.p = v; return nil }

// Values are the values the flag takes, in the order its usage names them.
func (c *Choice) Values() []string { return c.values }

// List reports whether the flag takes a comma-separated list of Values.
func (c *Choice) List() bool { return c.list }

// ChoicesOf returns the values f takes and whether it takes a list of them, when f is a
// Choice; nil otherwise.
func ChoicesOf(f *flag.Flag) (values []string, list bool) {
	if c, ok := f.Value.(*Choice); ok {
		return c.values, c.list
	}
	return nil, false
}
