// Package mid is an innocent-looking step between pure and host.
package mid

import _ "example.com/impure/host"
