{
  "variables": {
    "mzk_cflags": ["-O3", "-fPIC", "-fexceptions", "-fvisibility=hidden", "-Wall", "-Wextra", "-Wno-unused-parameter"],
    "mzk_napi_defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
    # The test addon is built only in a checkout (where test/ exists): a package carries no tests.
    "mzk_test_addon%": "<!(node -p \"+require('fs').existsSync('test')\")"
  },
  "targets": [
    {
      "target_name": "mzk_kernel_generic",
      "type": "static_library",
      "sources": ["native/kernel_generic.cpp", "native/points_generic.cpp", "native/verify_generic.cpp", "native/setup_generic.cpp", "native/phase2_generic.cpp"],
      "cflags_cc!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc": ["<@(mzk_cflags)"]
    },
    {
      "target_name": "mzk_kernel_adx",
      "type": "static_library",
      "sources": ["native/kernel_adx.cpp", "native/points_adx.cpp", "native/verify_adx.cpp", "native/setup_adx.cpp", "native/phase2_adx.cpp"],
      "cflags_cc!": ["-fno-exceptions", "-O2", "-O0"],
      "cflags_cc": ["<@(mzk_cflags)"],
      "conditions": [
        ["target_arch=='x64'", { "cflags_cc": ["-mbmi2", "-madx"] }]
      ]
    },
    {
      "target_name": "mzk_prover",
      "sources": ["native/addon.cpp", "native/bindings_keys.cpp", "native/bindings_prove.cpp", "native/bindings_points.cpp", "native/bindings_setup.cpp", "native/bindings_verify.cpp"],
      "dependencies": ["mzk_kernel_generic", "mzk_kernel_adx"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["<@(mzk_napi_defines)"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["<@(mzk_cflags)"],
      "libraries": ["-pthread"]
    }
  ],
  "conditions": [
    ["mzk_test_addon==1", {
      "targets": [
        {
          "target_name": "mzk_test_ops_generic",
          "type": "static_library",
          "sources": ["native/test_ops_generic.cpp"],
          "cflags_cc!": ["-fno-exceptions", "-O2", "-O0"],
          "cflags_cc": ["<@(mzk_cflags)"]
        },
        {
          "target_name": "mzk_test_ops_adx",
          "type": "static_library",
          "sources": ["native/test_ops_adx.cpp"],
          "cflags_cc!": ["-fno-exceptions", "-O2", "-O0"],
          "cflags_cc": ["<@(mzk_cflags)"],
          "conditions": [
            ["target_arch=='x64'", { "cflags_cc": ["-mbmi2", "-madx"] }]
          ]
        },
        {
          "target_name": "mzk_prover_test",
          "sources": ["native/test_addon.cpp", "native/gpu/test_gpu.cpp"],
          "dependencies": ["mzk_kernel_generic", "mzk_kernel_adx", "mzk_test_ops_generic", "mzk_test_ops_adx"],
          "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
          "defines": ["<@(mzk_napi_defines)"],
          "cflags_cc!": ["-fno-exceptions"],
          "cflags_cc": ["<@(mzk_cflags)"],
          "libraries": ["-pthread"]
        }
      ]
    }]
  ]
}
