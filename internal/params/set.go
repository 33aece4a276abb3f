package params

import (
	"fmt"
	"reflect"
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
