package incidentlib

import (
	"errors"
	"fmt"
)

// Error codes. Each protocol maps them to its own status in one place.
const (
	ENOTFOUND = "not_found" // no case, term or page by that name
	EINVALID  = "invalid"   // the caller's input is wrong; Param names it
	ETOOLARGE = "too_large" // the caller's input is over a size limit
	EINTERNAL = "internal"  // our fault; the message is never shown
	// EUNAVAILABLE: the request was refused for now (over a deadline or
	// a bound on work in flight); the same request may succeed later.
	EUNAVAILABLE = "unavailable"
	// ECANCELED: the caller went away before the answer was ready. It is
	// nobody's fault and is not logged as an error.
	ECANCELED = "canceled"
)

// Error is the library's error. Message is written for the person or model
// that made the request: it names what was wrong and, where it helps, what
// would be valid. Internal causes never go in Message.
type Error struct {
	Code    string
	Param   string // the parameter at fault, if any
	Message string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s", e.Param, e.Message)
	}
	return e.Message
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParam returns an EINVALID error naming the parameter at fault.
func InvalidParam(param, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EINTERNAL for an error that is not an
// *Error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message fit to show a user: the *Error's own
// message, or a fixed sentence for anything internal.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Error()
	}
	return "An internal error occurred; it has been logged."
}

// ErrorParam returns the parameter an *Error names, or "".
func ErrorParam(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}
