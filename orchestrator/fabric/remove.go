package fabric

import (
	"errors"

	"github.com/ftlab/ftlab/internal/nsutil"
)

// Remove deletes the named namespaces, and with them every interface, route
// and neighbour entry in them. Names that do not exist are skipped, so Remove
// is safe to call twice. It tries every name and reports every failure.
func Remove(namespaces []string) error {
	var errs []error
	for _, name := range namespaces {
		if err := nsutil.Delete(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
