// SPDX-License-Identifier: Apache-2.0
// The plugin libfakegpu_jit.so: kernels/jit_api.h's Jit over LLVM ORC (LLJIT). Each kernel is
// generated (codegen.cpp), optimised with the O2 pipeline for the host CPU, and compiled into
// the process; its code lives as long as the process.
// For whoever profiles or debugs the generated code: FAKEGPU_JIT_DUMP=DIR writes each kernel's
// optimised IR (DIR/NAME.ll) and native assembly (DIR/NAME.s); FAKEGPU_JIT_PERF=1 writes perf's
// jitdump (jit-PID.dump in the current directory: `perf record -k 1`, then `perf inject --jit`)
// so that `perf report` names the kernels' block and thread functions.
#include "jit/codegen.h"

#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace fg::jit {
namespace {

using namespace llvm;

std::string message(Error e) {
  std::string s;
  handleAllErrors(std::move(e), [&](const ErrorInfoBase& info) { s = info.message(); });
  return s;
}

class LlvmJit final : public kernels::Jit {
 public:
  static std::unique_ptr<LlvmJit> create(const kernels::RuntimeSymbol* symbols, size_t n, std::string* error) {
    std::string self_dump_dir;
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    auto jtmb = orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      *error = "cannot describe the host CPU to LLVM: " + message(jtmb.takeError());
      return nullptr;
    }
    // LLVM 14 names some CPUs by an older family; the host's own feature list enables what
    // it has (AVX-512 included).
    SubtargetFeatures features;
    StringMap<bool> host;
    if (sys::getHostCPUFeatures(host))
      for (auto& f : host) features.AddFeature(f.getKey(), f.getValue());
    jtmb->getFeatures() = features;
    jtmb->setCodeGenOptLevel(CodeGenOpt::Aggressive);
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
      *error = "cannot make a target machine: " + message(tm.takeError());
      return nullptr;
    }
    orc::LLJITBuilder builder;
    builder.setJITTargetMachineBuilder(*jtmb);
    const char* perf = std::getenv("FAKEGPU_JIT_PERF");
    if (perf && std::string(perf) == "1") {
      JITEventListener* listener = JITEventListener::createPerfJITEventListener();
      if (!listener) {
        *error = "FAKEGPU_JIT_PERF=1 but this LLVM was built without perf support (LLVM_USE_PERF)";
        return nullptr;
      }
      builder.setObjectLinkingLayerCreator([listener](orc::ExecutionSession& es, const Triple&) {
        auto layer = std::make_unique<orc::RTDyldObjectLinkingLayer>(
            es, [] { return std::make_unique<SectionMemoryManager>(); });
        layer->registerJITEventListener(*listener);
        return Expected<std::unique_ptr<orc::ObjectLayer>>(std::move(layer));
      });
    }
    if (const char* dump = std::getenv("FAKEGPU_JIT_DUMP"); dump && *dump) {
      if (std::error_code ec = sys::fs::create_directories(dump)) {
        *error = std::string("FAKEGPU_JIT_DUMP=") + dump + ": cannot create the directory: " + ec.message();
        return nullptr;
      }
      self_dump_dir = dump;
    }
    auto jit = builder.create();
    if (!jit) {
      *error = "cannot start LLVM's JIT: " + message(jit.takeError());
      return nullptr;
    }
    auto self = std::unique_ptr<LlvmJit>(new LlvmJit);
    self->dump_dir_ = self_dump_dir;
    self->tm_ = std::move(*tm);
    self->jit_ = std::move(*jit);
    orc::SymbolMap map;
    auto& es = self->jit_->getExecutionSession();
    for (size_t i = 0; i < n; ++i)
      map[es.intern(symbols[i].name)] = JITEvaluatedSymbol(pointerToJITTargetAddress(symbols[i].address),
                                                           JITSymbolFlags::Exported);
    auto& main = self->jit_->getMainJITDylib();
    if (Error e = main.define(orc::absoluteSymbols(std::move(map)))) {
      *error = "cannot define the runtime's symbols: " + message(std::move(e));
      return nullptr;
    }
    // libm and libgcc (sinf, exp2f, half conversions) from the process.
    auto gen = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(self->jit_->getDataLayout().getGlobalPrefix());
    if (!gen) {
      *error = "cannot search the process's libraries: " + message(gen.takeError());
      return nullptr;
    }
    main.addGenerator(std::move(*gen));
    return self;
  }

  bool compile(const kernels::CompileRequest& request, kernels::CompiledKernel* out, std::string* error) override {
    auto context = std::make_unique<LLVMContext>();
    std::unique_ptr<Module> m = generate(*context, request, out, error);
    if (!m) return error->empty();  // unsupported: recorded by the caller
    const std::string id = std::to_string(next_.fetch_add(1));
    const std::string name = "fg_block_" + id, thread = "fg_thread_" + id;
    m->getFunction("fg_block")->setName(name);
    m->getFunction("fg_thread")->setName(thread);
    m->setDataLayout(jit_->getDataLayout());
    m->setTargetTriple(tm_->getTargetTriple().str());
    optimize(*m);
    std::lock_guard lock(mu_);
    if (!dump_dir_.empty()) dump(*m, request.kernel + "." + id);
    if (Error e = jit_->addIRModule(orc::ThreadSafeModule(std::move(m), std::move(context)))) {
      *error = "LLVM could not compile the kernel: " + message(std::move(e));
      return false;
    }
    auto sym = jit_->lookup(name);
    if (!sym) {
      *error = "LLVM lost the compiled kernel: " + message(sym.takeError());
      return false;
    }
    out->run_block = reinterpret_cast<kernels::BlockFn>(sym->getAddress());
    auto tsym = jit_->lookup(thread);
    if (!tsym) {
      *error = "LLVM lost the compiled kernel's thread function: " + message(tsym.takeError());
      return false;
    }
    out->run_thread = reinterpret_cast<kernels::ThreadFn>(tsym->getAddress());
    return true;
  }

 private:
  LlvmJit() = default;

  void optimize(Module& m) {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cam;
    ModuleAnalysisManager mam;
    PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
    mpm.run(m, mam);
  }

  // NAME.ll and NAME.s in the dump directory; a failure is a warning (the kernel still runs).
  void dump(Module& m, const std::string& name) {
    const std::string base = dump_dir_ + "/" + name;
    std::error_code ec;
    raw_fd_ostream ll(base + ".ll", ec, sys::fs::OF_Text);
    if (!ec) m.print(ll, nullptr);
    raw_fd_ostream s(base + ".s", ec, sys::fs::OF_Text);
    legacy::PassManager pm;
    if (ec || tm_->addPassesToEmitFile(pm, s, nullptr, CGFT_AssemblyFile)) {
      std::fprintf(stderr, "fakegpu: FAKEGPU_JIT_DUMP: cannot write %s.s%s%s\n", base.c_str(), ec ? ": " : "",
                   ec ? ec.message().c_str() : "");
      return;
    }
    // Code generation changes the module (it is compiled again by the JIT): a copy.
    std::unique_ptr<Module> copy = CloneModule(m);
    pm.run(*copy);
  }

  std::string dump_dir_;
  std::unique_ptr<TargetMachine> tm_;
  std::unique_ptr<orc::LLJIT> jit_;
  std::mutex mu_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace
}  // namespace fg::jit

extern "C" [[gnu::visibility("default")]] fg::kernels::Jit* fakegpu_jit_create(
    uint32_t abi_version, const fg::kernels::RuntimeSymbol* symbols, size_t n, std::string* error) {
  if (abi_version != fg::kernels::kJitAbiVersion) {
    *error = "libfakegpu_jit.so speaks interface " + std::to_string(fg::kernels::kJitAbiVersion) + ", the backend " +
             std::to_string(abi_version) + ": both must come from the same build";
    return nullptr;
  }
  try {
    return fg::jit::LlvmJit::create(symbols, n, error).release();
  } catch (const std::exception& e) {
    *error = std::string("the kernel compiler failed to start: ") + e.what();
    return nullptr;
  }
}
