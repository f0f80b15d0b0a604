# blaster's Triton driver: run by the machine's python3 as `python3 -B -c <this text> MODE ...`.
#
#   probe              the interpreter, the folders it reads, and triton's version, as one JSON
#                      line on descriptor 3 (run before any candidate, outside the sandbox)
#   extract FILE NAME  the @triton.jit function NAME of FILE with its decorators, the @triton.jit
#                      functions and constants it uses and the file's triton imports, as a module
#                      text, in one JSON line on descriptor 3 (an ast walk: FILE is never run)
#   compile REQUEST    the candidate module of REQUEST (JSON) compiled for one variant with
#                      triton's own compile API; writes kernel.ptx, kernel.cubin and result.json
#                      into REQUEST's folder (run inside the compile sandbox)
#
# Nothing here prints the bytes of a file other than the candidate's own.

import ast
import json
import os
import sys
import traceback


def answer(value):
    os.write(3, (json.dumps(value) + "\n").encode())


def probe():
    readable = set()
    for path in [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + sys.path:
        if path and os.path.isabs(path) and os.path.exists(path):
            readable.add(os.path.realpath(path))
    executable = os.path.realpath(sys.executable)
    out = {"executable": executable, "readable": sorted(readable)}
    try:
        import triton
        out["triton"] = str(triton.__version__)
        readable.add(os.path.realpath(os.path.dirname(os.path.dirname(triton.__file__))))
        out["readable"] = sorted(readable)
    except Exception as e:
        out["error"] = "%s: %s" % (type(e).__name__, e)
    answer(out)


def dotted(node):
    if isinstance(node, ast.Call):
        return dotted(node.func)
    if isinstance(node, ast.Attribute):
        return dotted(node.value) + "." + node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def is_jit(node):
    return any(dotted(d).split(".")[-1] == "jit" for d in node.decorator_list)


def is_constant(value):
    if isinstance(value, ast.Constant):
        return True
    return (isinstance(value, ast.Call) and dotted(value.func).endswith("constexpr") and
            all(isinstance(a, ast.Constant) for a in value.args) and not value.keywords)


def extract(path, name):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    base = os.path.basename(path)
    tree = ast.parse(text, filename=base)
    lines = text.splitlines(True)
    functions = {}
    constants = {}
    imports = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if is_constant(node.value):
                for t in targets:
                    if isinstance(t, ast.Name):
                        constants[t.id] = node
        elif isinstance(node, ast.Import):
            if all(a.name.split(".")[0] == "triton" for a in node.names):
                imports.append(node)
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] == "triton" and node.level == 0:
                imports.append(node)
    jitted = sorted(n for n, f in functions.items() if is_jit(f))
    if name not in functions:
        return {"ok": False, "error": "%s has no top-level function %s; its @triton.jit functions: %s"
                % (base, name, ", ".join(jitted) or "none")}
    if not is_jit(functions[name]):
        return {"ok": False, "error": "%s in %s is not a @triton.jit function" % (name, base)}
    taken = {}
    pending = [functions[name]]
    while pending:
        node = pending.pop()
        if id(node) in taken:
            continue
        taken[id(node)] = node
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                used = functions.get(inner.id)
                if used is not None and is_jit(used):
                    pending.append(used)
                elif inner.id in constants:
                    pending.append(constants[inner.id])
    def first_line(node):
        decorators = getattr(node, "decorator_list", [])
        return min([node.lineno] + [d.lineno for d in decorators])
    parts = ["# blaster: %s and the @triton.jit functions it calls, taken from %s\n" % (name, base),
             "import triton\n", "import triton.language as tl\n"]
    for node in imports:
        parts.append("".join(lines[node.lineno - 1:node.end_lineno]))
    for node in sorted(taken.values(), key=first_line):
        parts.append("\n")
        parts.append("".join(lines[first_line(node) - 1:node.end_lineno]))
    module = "".join(parts)
    if not module.endswith("\n"):
        module += "\n"
    return {"ok": True, "module": module}


def value_of(text):
    if text in ("True", "False"):
        return text == "True"
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def failure(e, module_name):
    # The candidate's own frames with their lines; triton's frames by name only, so that no
    # byte of a host file reaches the log.
    frames = []
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == module_name:
            frames.append("  %s:%d, in %s: %s" % (module_name, frame.lineno, frame.name,
                                                 (frame.line or "").strip()))
    text = "%s: %s" % (type(e).__name__, e)
    if frames:
        text = "\n".join(["Traceback (the candidate's frames):"] + frames + [text])
    return text


def compile_variant(request_path):
    folder = os.path.dirname(os.path.abspath(request_path))
    with open(request_path) as f:
        request = json.load(f)
    result = {"ok": False}
    name = request["module_name"]
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.runtime.jit import JITFunction
    except Exception as e:
        result["log"] = "cannot import triton's compile API: %s: %s" % (type(e).__name__, e)
        return folder, result
    try:
        import linecache
        import types
        # Triton reads a kernel's source through inspect, which finds it in linecache: the
        # module keeps its own name, and no file of it is written.
        text = request["source"]
        linecache.cache[name] = (len(text), None, text.splitlines(True), name)
        module = types.ModuleType("blaster_candidate")
        module.__file__ = name
        sys.modules["blaster_candidate"] = module
        exec(compile(text, name, "exec"), module.__dict__)
        fn = getattr(module, request["function"], None)
        while fn is not None and not isinstance(fn, JITFunction) and hasattr(fn, "fn"):
            fn = fn.fn  # through @triton.autotune and @triton.heuristics to the kernel
        if not isinstance(fn, JITFunction):
            raise TypeError("%s defines no @triton.jit function %s" % (name, request["function"]))
        arguments = list(request["arguments"])
        constexprs_given = request["constexprs"]
        signature = {}
        constexprs = {}
        runtime = 0
        for param in fn.params:
            if param.is_constexpr:
                if param.name in constexprs_given:
                    constexprs[param.name] = value_of(constexprs_given[param.name])
                elif getattr(param, "has_default", False):
                    constexprs[param.name] = param.default
                else:
                    raise TypeError("%s's tl.constexpr parameter %s has no value; give it one in "
                                    "the plan's \"params\"" % (fn.__name__, param.name))
                signature[param.name] = "constexpr"
            else:
                if runtime < len(arguments):
                    signature[param.name] = arguments[runtime]
                runtime += 1
        if runtime != len(arguments):
            raise TypeError("%s takes %d arguments besides its tl.constexpr ones; the plan passes %d"
                            % (fn.__name__, runtime, len(arguments)))
        # The harness's buffers start 256-byte aligned: pointers are told divisible by 16, as
        # triton's own launcher tells it of aligned tensors. Integers are not specialized: one
        # variant serves every case.
        aligned = {(i,): [["tt.divisibility", 16]] for i, param in enumerate(fn.params)
                   if signature[param.name].startswith("*")}
        try:
            source = ASTSource(fn, signature, constexprs=constexprs, attrs=aligned)
        except TypeError:
            source = ASTSource(fn, signature, constexprs=constexprs)
        target = GPUTarget("cuda", request["capability"], 32)
        kernel = triton.compile(source, target=target,
                                options={"num_warps": request["num_warps"],
                                         "num_stages": request["num_stages"]})
        metadata = kernel.metadata
        ptx = kernel.asm["ptx"]
        cubin = kernel.asm["cubin"]
        with open(os.path.join(folder, "kernel.ptx"), "w") as f:
            f.write(ptx if isinstance(ptx, str) else ptx.decode())
        with open(os.path.join(folder, "kernel.cubin"), "wb") as f:
            f.write(cubin if isinstance(cubin, bytes) else cubin.encode())
        # The pointers triton's launcher appends after the kernel's own arguments, in order.
        scratch = []
        for kind in ("global_scratch", "profile_scratch"):
            if hasattr(metadata, kind + "_size"):
                scratch.append({"name": kind,
                                "block_bytes": int(getattr(metadata, kind + "_size") or 0),
                                "align": int(getattr(metadata, kind + "_align", 1) or 1)})
        result = {"ok": True, "name": metadata.name, "shared": int(metadata.shared),
                  "num_warps": int(metadata.num_warps), "scratch": scratch,
                  "log": "triton %s compiled %s with num_warps=%d num_stages=%d\n"
                         % (triton.__version__, fn.__name__, request["num_warps"],
                            request["num_stages"])}
    except BaseException as e:
        result = {"ok": False, "log": failure(e, name)}
    return folder, result


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "probe":
        probe()
    elif mode == "extract":
        try:
            answer(extract(sys.argv[2], sys.argv[3]))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError) as e:
            answer({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})
    elif mode == "compile":
        folder, result = compile_variant(sys.argv[2])
        with open(os.path.join(folder, "result.json"), "w") as f:
            json.dump(result, f)
    else:
        sys.exit("usage: probe | extract FILE NAME | compile REQUEST")


main()
