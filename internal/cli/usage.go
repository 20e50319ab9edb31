package cli

import "github.com/plasmodium/pm/internal/errs"

func usageError(err error) error {
	return &errs.Error{Code: errs.Usage, Err: err}
}
