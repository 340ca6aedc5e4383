//go:build tools

// Package gopeers pins the MCP peers that mcptape's end-to-end tests build
// from source. This file is never compiled (the "tools" build tag is never
// set); its blank imports only keep the go-sdk conformance programs in
// go.mod and go.sum, so that
//
//	go build -o DIR/ github.com/modelcontextprotocol/go-sdk/conformance/everything-server
//
// works inside this module without network access to anything but the
// module proxy and with -mod=readonly.
package gopeers

import (
	_ "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"
	_ "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
)
