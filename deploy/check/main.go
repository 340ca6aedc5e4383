// Command check validates the deployment files without a container engine or
// a cluster (make deploy-check). It parses the Dockerfile with
// BuildKit's own parser and linter (what 'docker build --check' runs), and
// decodes the Kubernetes manifests strictly into the API's Go types.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: check DOCKERFILE [MANIFEST.yaml...]")
		os.Exit(2)
	}
	bad := 0
	df, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	res, err := parser.Parse(bytes.NewReader(df))
	if err != nil {
		fmt.Println("dockerfile:", err)
		os.Exit(1)
	}
	for _, w := range res.Warnings {
		fmt.Println("dockerfile warning:", w.Short)
		bad++
	}
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, _ []parser.Range) {
		fmt.Printf("dockerfile lint %s: %s\n", rule, msg)
		bad++
	}})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		fmt.Println("dockerfile instructions:", err)
		os.Exit(1)
	}
	fmt.Printf("dockerfile: %d stages, %d global args\n", len(stages), len(metaArgs))
	for _, path := range os.Args[2:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				fmt.Println(path, i, err)
				bad++
				continue
			}
			var obj any
			switch meta.Kind {
			case "Deployment":
				obj = &appsv1.Deployment{}
			case "Service":
				obj = &corev1.Service{}
			default:
				fmt.Println(path, i, "unknown kind", meta.Kind)
				bad++
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				fmt.Println(path, i, meta.Kind, err)
				bad++
				continue
			}
			fmt.Printf("%s: %s ok (strict)\n", path, meta.Kind)
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}
