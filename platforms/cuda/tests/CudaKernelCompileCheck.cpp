/*
 * cuda_kernels_compile (CTest): HessianForce's device program compiled with NVRTC the way
 * OpenMM's CUDA platform compiles a program -- the precision's real/mixed typedefs, OpenMM's own
 * CUDA prelude (CudaKernelSources::common and vectorOps, read from libOpenMMCUDA.so), our defines,
 * our source -- for single, mixed and double precision. It needs no GPU, so the CUDA dialect of
 * the kernels is checked on every machine that builds the CUDA library.
 *
 * libOpenMMCUDA.so is loaded only to read those two strings: its libcuda.so.1 dependency is
 * satisfied by the toolkit's driver stub (loaded first, by path; nothing calls into it), libnvrtc
 * and libcufft by the toolkit's libraries. Arguments: the stub, libcufft, libOpenMMCUDA.so.
 */
#include "CommonHessianProgram.h"
#include <cstdio>
#include <dlfcn.h>
#include <nvrtc.h>
#include <string>
#include <vector>

namespace {

bool load(const char* path) {
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) != nullptr)
        return true;
    fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
    return false;
}

const std::string* openmmString(const char* mangled) {
    return static_cast<const std::string*>(dlsym(RTLD_DEFAULT, mangled));
}

/** Compiles one precision; prints NVRTC's log. Returns true on success. */
bool compile(const std::string& precision, const std::string& prelude) {
    const bool isDouble = precision == "double", isSingle = precision == "single";
    const char* r = isDouble ? "double" : "float";
    const char* m = isSingle ? "float" : "double";
    std::string src;
    for (const char* suffix : {"", "2", "3", "4"}) {
        src += std::string("typedef ") + r + suffix + " real" + suffix + ";\n";
        src += std::string("typedef ") + m + suffix + " mixed" + suffix + ";\n";
    }
    src += "typedef unsigned int tileflags;\n" + prelude + "\n";
    for (const auto& define : HessFit::hessianProgramDefines(precision == "mixed", 128))
        src += "#define " + define.first + " " + define.second + "\n";
    src += HessFit::hessianProgramSource();
    nvrtcProgram program;
    if (nvrtcCreateProgram(&program, src.c_str(), "hessfit.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtcCreateProgram failed\n");
        return false;
    }
    // OpenMM compiles for the device's architecture; compute_75 is the oldest CUDA 13 supports.
    std::vector<const char*> options = {"-arch=compute_75", "-diag-suppress=1444"};  // 1444: OpenMM's double4 typedefs
    if (!isDouble)
        options.push_back("--use_fast_math");
    const nvrtcResult result = nvrtcCompileProgram(program, (int) options.size(), options.data());
    size_t logSize = 0;
    nvrtcGetProgramLogSize(program, &logSize);
    std::vector<char> log(logSize + 1, '\0');
    nvrtcGetProgramLog(program, log.data());
    size_t ptxSize = 0;
    if (result == NVRTC_SUCCESS)
        nvrtcGetPTXSize(program, &ptxSize);
    printf("%-6s precision: %s, %zu bytes of PTX\n%s", precision.c_str(), nvrtcGetErrorString(result), ptxSize,
           log.data());
    nvrtcDestroyProgram(&program);
    return result == NVRTC_SUCCESS;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s <libcuda stub> <libcufft> <libOpenMMCUDA.so>\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < 4; i++)
        if (!load(argv[i]))
            return 1;
    const std::string* common = openmmString("_ZN6OpenMM17CudaKernelSources6commonB5cxx11E");
    const std::string* vectorOps = openmmString("_ZN6OpenMM17CudaKernelSources9vectorOpsB5cxx11E");
    if (common == nullptr || vectorOps == nullptr || common->empty()) {
        fprintf(stderr, "libOpenMMCUDA.so does not export CudaKernelSources::common and vectorOps\n");
        return 1;
    }
    bool ok = true;
    for (const char* precision : {"single", "mixed", "double"})
        ok = compile(precision, *common + "\n" + *vectorOps) && ok;
    printf("%s\n", ok ? "cuda_kernels_compile: OK" : "cuda_kernels_compile: FAILED");
    return ok ? 0 : 1;
}
