package params

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Env is what parameter values may refer to.
type Env struct {
	// RTT is the base round-trip time of the fabric the parameters are
	// for: the unit of durations written as "2rtt".
	RTT time.Duration
	// Dilation stretches durations written in absolute time ("15us"),
	// which are the network's, when the fabric runs that many times
	// slower than its topology says; 0 or 1 leaves them as written.
	// Multiples of the RTT are not stretched again: the base RTT is the
	// emulated fabric's.
	Dilation float64
}

// Checker is implemented by blocks with constraints between fields. Check
// returns the field to blame and a message, or "" when all is well.
type Checker interface {
	Check() (field, msg string)
}

// Block describes one parameter block: a key in files and the struct it
// decodes into.
type Block struct {
	Key  string       // the key in files and on the wire, e.g. "rss"
	What string       // who reads it, for messages: "the rss, rss+pfld and rss+rack transports"
	Type reflect.Type // a struct type with tagged fields
}

// BlockOf describes the block of struct type T.
func BlockOf[T any](key, what string) Block {
	return Block{Key: key, What: what, Type: reflect.TypeFor[T]()}
}

// Names lists the block's keys in declaration order.
func (b Block) Names() []string {
	names := make([]string, b.Type.NumField())
	for i := range names {
		names[i] = b.Type.Field(i).Tag.Get("yaml")
	}
	return names
}

// field returns the struct field of a key.
func (b Block) field(key string) (reflect.StructField, int, bool) {
	for i := range b.Type.NumField() {
		if f := b.Type.Field(i); f.Tag.Get("yaml") == key {
			return f, i, true
		}
	}
	return reflect.StructField{}, -1, false
}

// Defaults returns a pointer to a new block struct with every default
// set. Defaults are checked by the tests (CheckDefaults); a bad one is a
// programming error and panics.
func (b Block) Defaults(env Env) reflect.Value {
	v := reflect.New(b.Type)
	for i := range b.Type.NumField() {
		f := b.Type.Field(i)
		x, err := Parse(f, f.Tag.Get("default"), env)
		if err != nil {
			panic(fmt.Sprintf("params: default of %s.%s: %v", b.Type.Name(), f.Name, err))
		}
		v.Elem().Field(i).Set(x)
	}
	return v
}

// Defaults returns the defaults of block struct T.
func Defaults[T any](env Env) T {
	return *BlockOf[T]("", "").Defaults(env).Interface().(*T)
}

// Decode decodes the block's mapping n (nil: absent) over its defaults,
// recording problems on w with field paths relative to the block. It
// returns a pointer to the block struct.
func (b Block) Decode(n *yaml.Node, w *yamldoc.Walker, env Env) reflect.Value {
	v := b.Defaults(env)
	if n == nil {
		return v
	}
	names := b.Names()
	want := fmt.Sprintf("a mapping of parameters of %s: %s", b.What, strings.Join(names, ", "))
	w.Fields(n, want, names, nil, func(key string, node *yaml.Node) {
		f, i, _ := b.field(key)
		text, ok := w.Scalar(node, key, Describe(f))
		if !ok {
			return
		}
		x, err := Parse(f, text, env)
		if err == nil {
			err = CheckField(f, x)
		}
		if err != nil {
			w.Problem(yamldoc.PosOf(node), key, "%v", err)
			return
		}
		v.Elem().Field(i).Set(x)
	})
	if c, ok := v.Interface().(Checker); ok {
		if field, msg := c.Check(); msg != "" && !w.IsBad(field) {
			w.Problem(w.Val(field), field, "%s", msg)
		}
	}
	return v
}

// Set parses text for the block's key and stores it in the block struct
// that ptr points to: for command-line flags such as --param rss.sigma=8.
func (b Block) Set(ptr any, key, text string, env Env) error {
	f, i, ok := b.field(key)
	if !ok {
		msg := fmt.Sprintf("%s has no parameter %q", b.Key, key)
		if g := yamldoc.Closest(key, b.Names()); g != "" {
			msg += fmt.Sprintf("; did you mean %q?", g)
		}
		return fmt.Errorf("%s (valid: %s)", msg, strings.Join(b.Names(), ", "))
	}
	x, err := Parse(f, text, env)
	if err == nil {
		err = CheckField(f, x)
	}
	if err != nil {
		return fmt.Errorf("%s.%s: %w", b.Key, key, err)
	}
	reflect.ValueOf(ptr).Elem().Field(i).Set(x)
	return nil
}

// Validate checks a block struct that did not come from a file (over the
// wire, built in Go): every field within its bounds, and the block's own
// Check. ptr points to the block struct.
func (b Block) Validate(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Elem().Type() != b.Type {
		return fmt.Errorf("params: %s: got %T, want *%s", b.Key, ptr, b.Type.Name())
	}
	for i := range b.Type.NumField() {
		f := b.Type.Field(i)
		x := v.Elem().Field(i)
		err := CheckField(f, x)
		if err == nil && f.Type.Kind() == reflect.String && f.Tag.Get("enum") != "" {
			err = OneOf(f.Tag.Get("yaml"), x.String(), strings.Split(f.Tag.Get("enum"), ","))
		}
		if err == nil && f.Type == reflect.TypeFor[time.Duration]() && x.Int() < 0 {
			err = fmt.Errorf("%s is negative", x.Interface())
		}
		if err != nil {
			return fmt.Errorf("%s.%s: %w", b.Key, f.Tag.Get("yaml"), err)
		}
	}
	if c, ok := ptr.(Checker); ok {
		if field, msg := c.Check(); msg != "" {
			return fmt.Errorf("%s.%s: %s", b.Key, field, msg)
		}
	}
	return nil
}

// CheckDefaults reports defaults that do not parse or break their own
// bounds, and all-zero defaults (a sign of a missing tag); for tests.
func (b Block) CheckDefaults(env Env) error {
	var errs []string
	func() {
		defer func() {
			if r := recover(); r != nil {
				errs = append(errs, fmt.Sprint(r))
			}
		}()
		v := b.Defaults(env)
		if err := b.Validate(v.Interface()); err != nil {
			errs = append(errs, err.Error())
		}
	}()
	for i := range b.Type.NumField() {
		f := b.Type.Field(i)
		for _, tag := range []string{"yaml", "json", "default", "doc"} {
			if f.Tag.Get(tag) == "" {
				errs = append(errs, fmt.Sprintf("%s.%s has no %s tag", b.Key, f.Name, tag))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Parse parses the text of a parameter according to its type and tags. A
// duration tagged rtt:"ok" may be written as a multiple of the base RTT,
// "2rtt".
func Parse(f reflect.StructField, text string, env Env) (reflect.Value, error) {
	text = strings.TrimSpace(text)
	if z := f.Tag.Get("zero"); z != "" && strings.EqualFold(text, z) {
		return reflect.Zero(f.Type), nil
	}
	var (
		x   any
		err error
	)
	isDur := f.Type == reflect.TypeFor[time.Duration]()
	switch {
	case isDur && f.Tag.Get("rtt") != "" && strings.HasSuffix(strings.ToLower(text), "rtt"):
		x, err = ParseRTTs(strings.TrimSpace(text[:len(text)-3]), env.RTT)
	case isDur:
		var d time.Duration
		d, err = ParseDuration(text)
		if err != nil && f.Tag.Get("rtt") != "" {
			err = fmt.Errorf("%v; or a multiple of the base RTT such as 2rtt", err)
		}
		if env.Dilation > 0 && env.Dilation != 1 {
			d = time.Duration(math.Round(float64(d) * env.Dilation))
		}
		x = d
	case f.Type.Kind() == reflect.Int:
		var n int
		n, err = strconv.Atoi(text)
		if err != nil {
			err = fmt.Errorf("expected a whole number, found %q", text)
		}
		x = n
	case f.Type.Kind() == reflect.Float64:
		x, err = ParseFraction(text)
	case f.Type.Kind() == reflect.Bool:
		x, err = ParseBool(text)
	case f.Type.Kind() == reflect.Uint64 && f.Tag.Get("unit") == "size":
		x, err = units.ParseSize(text)
	case f.Type.Kind() == reflect.Uint64 && f.Tag.Get("unit") == "rate":
		var r uint64
		r, err = units.ParseRate(text)
		if err == nil && r == 0 {
			err = fmt.Errorf("must be greater than 0")
		}
		x = r
	case f.Type.Kind() == reflect.String:
		x = text
		if enum := f.Tag.Get("enum"); enum != "" {
			err = OneOf(f.Tag.Get("yaml"), text, strings.Split(enum, ","))
		}
	default:
		panic(fmt.Sprintf("params: parameter %s has unsupported type %s", f.Name, f.Type))
	}
	if err != nil {
		if z := f.Tag.Get("zero"); z != "" {
			err = fmt.Errorf("%v; or %q", err, z)
		}
		return reflect.Value{}, err
	}
	return reflect.ValueOf(x).Convert(f.Type), nil
}

// CheckField checks the bounds of a parsed value.
func CheckField(f reflect.StructField, x reflect.Value) error {
	if z := f.Tag.Get("zero"); z != "" && x.IsZero() {
		return nil
	}
	bound := func(tag string) (reflect.Value, bool) {
		s := f.Tag.Get(tag)
		if s == "" {
			return reflect.Value{}, false
		}
		b, err := Parse(f, s, Env{})
		if err != nil {
			panic(fmt.Sprintf("params: %s bound of %s: %v", tag, f.Name, err))
		}
		return b, true
	}
	less := func(a, b reflect.Value) bool {
		switch a.Kind() {
		case reflect.Int, reflect.Int64:
			return a.Int() < b.Int()
		case reflect.Uint64:
			return a.Uint() < b.Uint()
		case reflect.Float64:
			return a.Float() < b.Float()
		}
		return false
	}
	lo, hasLo := bound("min")
	hi, hasHi := bound("max")
	gt, hasGt := bound("gt")
	lt, hasLt := bound("lt")
	if (hasLo && less(x, lo)) || (hasHi && less(hi, x)) || (hasGt && !less(gt, x)) || (hasLt && !less(x, lt)) {
		return fmt.Errorf("%s is out of range; %s must be %s", Format(f, x), f.Tag.Get("yaml"), Range(f))
	}
	if f.Tag.Get("pow2") != "" && (x.Int() <= 0 || bits.OnesCount64(uint64(x.Int())) != 1) {
		return fmt.Errorf("%d is not a power of two; %s must be one (1, 2, 4, 8, ...)", x.Int(), f.Tag.Get("yaml"))
	}
	if m, _ := strconv.Atoi(f.Tag.Get("multiple")); m > 0 && x.Int()%int64(m) != 0 {
		return fmt.Errorf("%d is not a multiple of %d; %s must be one", x.Int(), m, f.Tag.Get("yaml"))
	}
	return nil
}

// Range says in words which values a field's bounds allow; "" without
// bounds.
func Range(f reflect.StructField) string {
	show := func(tag string) string { return f.Tag.Get(tag) }
	has := func(tag string) bool { return f.Tag.Get(tag) != "" }
	switch {
	case has("min") && has("max"):
		return fmt.Sprintf("from %s to %s", show("min"), show("max"))
	case has("gt") && has("max"):
		return fmt.Sprintf("above %s and at most %s", show("gt"), show("max"))
	case has("gt") && has("lt"):
		return fmt.Sprintf("between %s and %s, exclusive", show("gt"), show("lt"))
	case has("min"):
		return "at least " + show("min")
	case has("max"):
		return "at most " + show("max")
	case has("gt"):
		return "above " + show("gt")
	}
	return ""
}

// Format writes a value the way a file would.
func Format(f reflect.StructField, x reflect.Value) string {
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		return FormatDuration(time.Duration(x.Int()))
	case f.Tag.Get("unit") == "size":
		return units.FormatSize(x.Uint())
	case f.Tag.Get("unit") == "rate":
		return units.FormatRate(x.Uint())
	}
	return fmt.Sprint(x.Interface())
}

// Describe says what a parameter expects, for shape errors and docs.
func Describe(f reflect.StructField) string {
	var s string
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		s = "a duration such as 1ms"
		if f.Tag.Get("rtt") != "" {
			s += " or 2rtt"
		}
	case f.Tag.Get("unit") == "size":
		s = "a size such as 64KiB"
	case f.Tag.Get("unit") == "rate":
		s = "a rate such as 100Mbit"
	case f.Type.Kind() == reflect.Int:
		s = "a whole number"
	case f.Type.Kind() == reflect.Float64:
		s = "a number such as 0.05 or 5%"
	case f.Type.Kind() == reflect.Bool:
		s = "true or false"
	case f.Tag.Get("enum") != "":
		s = "one of " + strings.ReplaceAll(f.Tag.Get("enum"), ",", ", ")
	}
	if z := f.Tag.Get("zero"); z != "" {
		s += fmt.Sprintf(", or %q", z)
	}
	return s
}

// Field is the documentation of one parameter.
type Field struct {
	Key     string // yaml key
	Default string // as written in files
	Expects string // Describe, with the range
	Doc     string
}

// Fields documents the block's parameters in declaration order.
func (b Block) Fields() []Field {
	out := make([]Field, b.Type.NumField())
	for i := range out {
		f := b.Type.Field(i)
		exp := Describe(f)
		if r := Range(f); r != "" {
			exp += ", " + r
		}
		if f.Tag.Get("pow2") != "" {
			exp += ", a power of two"
		}
		if m := f.Tag.Get("multiple"); m != "" {
			exp += ", a multiple of " + m
		}
		out[i] = Field{Key: f.Tag.Get("yaml"), Default: f.Tag.Get("default"), Expects: exp, Doc: f.Tag.Get("doc")}
	}
	return out
}

// Find returns the block with the key.
func Find(blocks []Block, key string) (Block, bool) {
	i := slices.IndexFunc(blocks, func(b Block) bool { return b.Key == key })
	if i < 0 {
		return Block{}, false
	}
	return blocks[i], true
}
