package params

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A set of blocks is a struct with one pointer field per block, such as
//
//	type Params struct {
//		RSS  *RSSParams  `json:"rss,omitempty" what:"the rss transports"`
//		PFLD *PFLDParams `json:"pfld,omitempty" what:"the rss+pfld transport"`
//	}
//
// A block's key is its field's json name. The set is what a registry
// hands its constructors and what the agent protocol carries, typed; a
// nil field is a block the configuration does not use.

// BlocksOf describes the blocks of set struct S, in field order.
func BlocksOf[S any]() []Block {
	t := reflect.TypeFor[S]()
	out := make([]Block, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
			panic(fmt.Sprintf("params: %s.%s is not a pointer to a block struct", t.Name(), f.Name))
		}
		out = append(out, Block{Key: jsonName(f), What: f.Tag.Get("what"), Type: f.Type.Elem()})
	}
	return out
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// setField returns the field of set (a pointer to a set struct) that
// holds block key.
func setField(set any, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(set).Elem()
	for i := range v.NumField() {
		if jsonName(v.Type().Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Get returns the block key of set (a pointer to a set struct): a pointer
// to the block struct, or nil when absent or unknown.
func Get(set any, key string) any {
	f, ok := setField(set, key)
	if !ok || f.IsNil() {
		return nil
	}
	return f.Interface()
}

// Put stores block (a pointer to the block struct, or nil to remove it)
// as block key of set.
func Put(set any, key string, block any) {
	f, ok := setField(set, key)
	if !ok {
		panic(fmt.Sprintf("params: %T has no block %q", set, key))
	}
	if block == nil {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	f.Set(reflect.ValueOf(block))
}

// Present lists the keys of the blocks set holds, in field order.
func Present(set any) []string {
	v := reflect.ValueOf(set).Elem()
	var out []string
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			out = append(out, jsonName(v.Type().Field(i)))
		}
	}
	return out
}

// Registry is a registry of entries that each take some blocks of the
// set S (a set struct such as scheme.Params): transports, congestion
// controls. It looks entries up by name and fills, checks and sets their
// blocks, so every registry behaves and words its errors the same way.
type Registry[E, S any] struct {
	// Kind names an entry in messages: "scheme", "congestion control".
	Kind string
	// Prefix starts every error: "scheme", "cc".
	Prefix  string
	Entries []E
	// Name and Take return an entry's name and the keys of its blocks.
	Name func(E) string
	Take func(E) []string
}

// Names lists the entries' names in order.
func (r *Registry[E, S]) Names() []string {
	out := make([]string, len(r.Entries))
	for i, e := range r.Entries {
		out[i] = r.Name(e)
	}
	return out
}

// Lookup returns the entry called name.
func (r *Registry[E, S]) Lookup(name string) (E, error) {
	i := slices.IndexFunc(r.Entries, func(e E) bool { return r.Name(e) == name })
	if i < 0 {
		var zero E
		return zero, fmt.Errorf("%s: %w", r.Prefix, OneOf(r.Kind, name, r.Names()))
	}
	return r.Entries[i], nil
}

// Defaults returns entry name's blocks with every default, for a fabric
// whose base RTT is env.RTT.
func (r *Registry[E, S]) Defaults(name string, env Env) (*S, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	p := new(S)
	for _, key := range r.Take(e) {
		b, ok := Find(BlocksOf[S](), key)
		if !ok {
			panic(fmt.Sprintf("params: %s %s takes no block %q", r.Kind, name, key))
		}
		Put(p, key, b.Defaults(env).Interface())
	}
	return p, nil
}

// Check returns entry name once p (nil: no blocks) holds every block it
// takes, each valid (Validate), and no other, so a setting cannot silently
// do nothing. The error lists every problem.
func (r *Registry[E, S]) Check(name string, p *S) (E, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return e, err
	}
	if p == nil {
		p = new(S)
	}
	blocks, take := BlocksOf[S](), r.Take(e)
	var errs []error
	for _, key := range take {
		v := Get(p, key)
		if v == nil {
			errs = append(errs, fmt.Errorf("the %s block is missing", key))
			continue
		}
		b, _ := Find(blocks, key)
		if err := b.Validate(v); err != nil {
			errs = append(errs, err)
		}
	}
	for _, key := range Present(p) {
		if !slices.Contains(take, key) {
			errs = append(errs, fmt.Errorf("the %s block is not one of %s's (%s)", key, name, BlockList(take)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return e, fmt.Errorf("%s %s: %w", r.Prefix, name, err)
	}
	return e, nil
}

// SetParam sets one parameter of entry name's blocks in p from text, as a
// command line gives it: "rss.sigma" names the block; a bare "sigma" is
// looked up among the blocks the entry takes. A block not yet in p starts
// from its defaults.
func (r *Registry[E, S]) SetParam(p *S, name, key, text string, env Env) error {
	e, err := r.Lookup(name)
	if err != nil {
		return err
	}
	blocks, take := BlocksOf[S](), r.Take(e)
	block, field, qualified := strings.Cut(key, ".")
	if !qualified {
		field, block = key, ""
		var owners []string
		for _, k := range take {
			b, _ := Find(blocks, k)
			if slices.Contains(b.Names(), field) {
				owners = append(owners, k)
			}
		}
		switch len(owners) {
		case 0:
			return fmt.Errorf("%s takes no parameter %q (blocks: %s)", name, key, BlockList(take))
		case 1:
			block = owners[0]
		default:
			return fmt.Errorf("%q is a parameter of several blocks of %s; write one of %s.%s", key, name, strings.Join(owners, ", "), field)
		}
	}
	if !slices.Contains(take, block) {
		return fmt.Errorf("%s does not take the %s block (blocks: %s)", name, block, BlockList(take))
	}
	b, _ := Find(blocks, block)
	v := Get(p, block)
	if v == nil {
		v = b.Defaults(env).Interface()
		Put(p, block, v)
	}
	return b.Set(v, field, text, env)
}

// BlockList lists block keys for messages: "rss, pfld", or "it takes
// none".
func BlockList(keys []string) string {
	if len(keys) == 0 {
		return "it takes none"
	}
	return strings.Join(keys, ", ")
}
