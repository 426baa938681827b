// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @negative_wait() {
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  attn_ptx.cp_async_wait_group -1
  return
}

// -----

func.func @ex2_of_f16(%x: f16) -> f16 {
  // expected-error @+1 {{must be 32-bit float}}
  %y = "attn_ptx.ex2_approx"(%x) : (f16) -> f16
  return %y : f16
}
