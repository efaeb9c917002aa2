// Command protogen generates the Go code of the protocol without protoc: it compiles the
// .proto files with protocompile (pure Go, from the Go module proxy) and runs the
// protoc plugins protoc-gen-go and protoc-gen-go-grpc on them, exactly as protoc would
// (a CodeGeneratorRequest on stdin, a CodeGeneratorResponse on stdout).
//
//	go run ./internal/protogen -I ../../proto -out DIR \
//	    -plugin go=PATH:PARAMS -plugin go-grpc=PATH:PARAMS FILE.proto...
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

type plugins []string

func (p *plugins) String() string     { return strings.Join(*p, " ") }
func (p *plugins) Set(v string) error { *p = append(*p, v); return nil }

func main() {
	include := flag.String("I", ".", "the folder the .proto files' names are relative to")
	out := flag.String("out", "gen", "where the generated files go")
	var runs plugins
	flag.Var(&runs, "plugin", "NAME=PATH:PARAMETER (repeatable)")
	flag.Parse()
	if err := generate(*include, *out, runs, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}

func generate(include, out string, runs []string, names []string) error {
	if len(names) == 0 {
		return errors.New("no .proto files given")
	}
	compiler := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{include}}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := compiler.Compile(context.Background(), names...)
	if err != nil {
		return err
	}
	// Every file the plugins need, dependencies first, once each.
	var all []*descriptorpb.FileDescriptorProto
	seen := map[string]bool{}
	var visit func(fd protoreflect.FileDescriptor)
	visit = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			visit(imports.Get(i).FileDescriptor)
		}
		all = append(all, protodesc.ToFileDescriptorProto(fd))
	}
	for _, f := range files {
		visit(f)
	}
	for _, run := range runs {
		name, rest, ok := strings.Cut(run, "=")
		if !ok {
			return fmt.Errorf("-plugin %q: want NAME=PATH:PARAMETER", run)
		}
		path, param, _ := strings.Cut(rest, ":")
		req := &pluginpb.CodeGeneratorRequest{FileToGenerate: names, Parameter: proto.String(param), ProtoFile: all}
		if err := runPlugin(name, path, req, out); err != nil {
			return err
		}
	}
	return nil
}

func runPlugin(name, path string, req *pluginpb.CodeGeneratorRequest, out string) error {
	in, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("protoc-gen-%s (%s): %v: %s", name, path, err, stderr.String())
	}
	var resp pluginpb.CodeGeneratorResponse
	if err := proto.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return fmt.Errorf("protoc-gen-%s: unreadable answer: %v", name, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("protoc-gen-%s: %s", name, resp.GetError())
	}
	for _, f := range resp.File {
		target := filepath.Join(out, filepath.FromSlash(f.GetName()))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, []byte(f.GetContent()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
