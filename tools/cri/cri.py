#!/usr/bin/python3
"""tools/cri/cri.py: a small CRI (Kubernetes Container Runtime Interface,
runtime.v1) client, for qpod's tests (tests/cli/cri.bats) and `qpod bench
cri` (bench_cri.py beside it), built on Debian's python3-grpcio and
python3-protobuf, with the message types compiled from runtime_v1.proto (next
to this file) by protoc (Debian: protobuf-compiler).

    cri.py -s SOCKET [--timeout S] [--gen DIR] METHOD [REQUEST-JSON|-]

METHOD is a RuntimeService or ImageService method declared in
runtime_v1.proto (RunPodSandbox, CreateContainer, ExecSync, ...). The
request is proto3 JSON with the .proto field names (default "{}"; "-" reads
it from stdin). The response is printed as one JSON object with the .proto
field names and every field (defaults too: exit_code 0, state
"SANDBOX_READY"); the bytes stdout and stderr of ExecSync are printed as
text. Exit status 0 on success; on a gRPC error one line
"cri: METHOD: CODE: details" on stderr and exit status 1; 2 for usage errors.

The generated module is cached in --gen DIR (default: a temporary
directory, removed on exit), regenerated when the .proto is newer.

As a module: Client(socket, gen_dir).call(METHOD, request-dict, timeout)
returns the response as a dict (the same form as printed) or raises
CriError."""

import argparse
import base64
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = "runtime_v1.proto"


class CriError(Exception):
    """A failed call: .code is the gRPC status name (UNAVAILABLE, ...),
    or USAGE for a request this client cannot send."""

    def __init__(self, method, code, details):
        super().__init__("%s: %s: %s" % (method, code, details))
        self.method, self.code, self.details = method, code, details


def load_pb2(gen_dir):
    out = os.path.join(gen_dir, "runtime_v1_pb2.py")
    src = os.path.join(HERE, PROTO)
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(gen_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=gen_dir)
        try:
            subprocess.run(["protoc", "-I", HERE, "--python_out=" + tmp, src], check=True)
            os.replace(os.path.join(tmp, "runtime_v1_pb2.py"), out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.path.insert(0, gen_dir)
    return importlib.import_module("runtime_v1_pb2")


def find_method(pb2, name):
    for service in pb2.DESCRIPTOR.services_by_name.values():
        m = service.methods_by_name.get(name)
        if m is not None:
            return service, m
    return None, None


class Client:
    """One gRPC channel to the CRI socket; call() is safe from threads."""

    def __init__(self, socket, gen_dir):
        import grpc

        self.pb2 = load_pb2(gen_dir)
        self.channel = grpc.insecure_channel("unix://" + os.path.abspath(socket))

    def close(self):
        self.channel.close()

    def call(self, method_name, request, timeout=60.0):
        import grpc
        from google.protobuf import json_format, symbol_database

        service, method = find_method(self.pb2, method_name)
        if method is None:
            raise CriError(method_name, "USAGE", "unknown method (not in %s)" % PROTO)
        db = symbol_database.Default()
        req_cls = db.GetSymbol(method.input_type.full_name)
        resp_cls = db.GetSymbol(method.output_type.full_name)
        try:
            if isinstance(request, str):
                req = json_format.Parse(request, req_cls())
            else:
                req = json_format.ParseDict(request, req_cls())
        except json_format.ParseError as e:
            raise CriError(method_name, "USAGE", "bad request JSON: %s" % e) from None
        rpc = self.channel.unary_unary(
            "/%s/%s" % (service.full_name, method.name),
            request_serializer=req_cls.SerializeToString,
            response_deserializer=resp_cls.FromString,
        )
        try:
            resp = rpc(req, timeout=timeout)
        except grpc.RpcError as e:
            details = (e.details() or "").replace("\n", " ")
            raise CriError(method_name, e.code().name, details) from None
        out = json_format.MessageToDict(
            resp, preserving_proto_field_name=True, including_default_value_fields=True
        )
        if method.output_type.name == "ExecSyncResponse":
            for k in ("stdout", "stderr"):
                out[k] = base64.b64decode(out.get(k, "")).decode("utf-8", "replace")
        return out


def main():
    ap = argparse.ArgumentParser(prog="cri.py", description="CRI runtime.v1 client")
    ap.add_argument("-s", "--socket", required=True, help="path of the CRI unix socket")
    ap.add_argument("--timeout", type=float, default=60.0, help="deadline of the call in seconds")
    ap.add_argument("--gen", help="directory for the generated protobuf module")
    ap.add_argument("method")
    ap.add_argument("request", nargs="?", default="{}")
    args = ap.parse_args()

    tmp = None
    gen = args.gen
    if not gen:
        tmp = tempfile.mkdtemp(prefix="cri-py.")
        gen = tmp
    try:
        client = Client(args.socket, gen)
        text = sys.stdin.read() if args.request == "-" else args.request
        try:
            out = client.call(args.method, text, args.timeout)
        except CriError as e:
            print("cri: %s" % e, file=sys.stderr)
            return 2 if e.code == "USAGE" else 1
        finally:
            client.close()
        json.dump(out, sys.stdout, sort_keys=True)
        sys.stdout.write("\n")
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
