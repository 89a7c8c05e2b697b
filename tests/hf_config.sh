#!/bin/sh
# hf_config.sh PPSCHED TMPDIR - ppsched plan --hf-config on the configs in
# tests/hf_configs/ (written from the published config.json files): the
# parameter counts equal the presets' (Llama 3 8B, 70B, 405B, Mixtral 8x7B,
# DeepSeek-V3 without its MTP module) or the published exact counts (Qwen2-7B
# 7,615,616,512; Mistral 7B v0.3 7,248,023,552; Qwen3-30B-A3B 30,532,122,624
# of which 3.3B active); what is
# not modelled is refused by name with exit 2 (Mistral 7B v0.1's sliding
# window, DeepSeek-V3's MTP module); a broken file names the field. Skips
# with a line where ppsched was built without cJSON.
pp=$1
tmp=$2
here=$(dirname "$0")/hf_configs
fail=0
if "$pp" plan --hf-config "$here/llama3-8b.json" --gpus 1 --global-batch 1 2>&1 | grep -q 'without cJSON'; then
    echo "[skip] hf_config: ppsched was built without cJSON (apt-get install libcjson-dev, then make)"
    exit 0
fi
# the "params" and "active_params" of ppsched plan ... --format json (exit 1, nothing fits, is fine here)
counts() {
    "$pp" plan "$@" --gpus 8 --global-batch 8 --pp 1 --tp 1 --cp 1 --mbs 1 -s 1f1b --seq 4096 --format json 2>/dev/null |
        head -1 | sed 's/.*"params": \([0-9]*\), "active_params": \([0-9]*\),.*/\1 \2/'
}
same() { # config preset
    a=$(counts --hf-config "$here/$1.json"); b=$(counts --model "$2")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then echo "    $1: $a = --model $2"; else echo "    FAIL $1: '$a', --model $2: '$b'"; fail=1; fi
}
exact() { # config params active_lo active_hi
    set -- "$1" "$2" "$3" "$4" "$(counts --hf-config "$here/$1.json")"
    p=${5% *}; act=${5#* }
    if [ "$p" = "$2" ] && [ "$act" -ge "$3" ] && [ "$act" -le "$4" ]; then echo "    $1: $p parameters, $act active"
    else echo "    FAIL $1: '$5', published $2 (active $3..$4)"; fail=1; fi
}
refused() { # file expected-text
    "$pp" plan --hf-config "$1" --gpus 8 --global-batch 8 >/dev/null 2>"$tmp/hf.err"; rc=$?
    if [ $rc -eq 2 ] && grep -q -e "$2" "$tmp/hf.err"; then echo "    refused ($2)"
    else echo "    FAIL exit $rc for $1, wanted 2 and '$2':"; cat "$tmp/hf.err"; fail=1; fi
}
same llama3-8b llama3-8b
same llama3-70b llama3-70b
same llama3-405b llama3-405b
same mixtral-8x7b mixtral-8x7b
sed 's/"num_nextn_predict_layers": 1/"num_nextn_predict_layers": 0/' "$here/deepseek-v3.json" > "$tmp/deepseek-v3-main.json"
a=$(counts --hf-config "$tmp/deepseek-v3-main.json"); b=$(counts --model deepseek-v3)
if [ -n "$a" ] && [ "$a" = "$b" ]; then echo "    deepseek-v3 (num_nextn_predict_layers 0): $a = --model deepseek-v3"
else echo "    FAIL deepseek-v3: '$a', --model: '$b'"; fail=1; fi
exact qwen2-7b 7615616512 7615616512 7615616512
exact mistral-7b-v0.3 7248023552 7248023552 7248023552
exact qwen3-30b-a3b 30532122624 3300000000 3400000000
refused "$here/mistral-7b-v0.1.json" 'sliding_window: 4096'
refused "$here/deepseek-v3.json" 'num_nextn_predict_layers: 1'
sed 's/"hidden_size": 4096/"hidden_size": "big"/' "$here/llama3-8b.json" > "$tmp/bad1.json"
refused "$tmp/bad1.json" 'hidden_size: must be a whole number'
grep -v num_hidden_layers "$here/llama3-8b.json" > "$tmp/bad2.json"
refused "$tmp/bad2.json" 'num_hidden_layers: missing'
sed 's/"model_type": "llama"/"model_type": "gemma"/' "$here/llama3-8b.json" > "$tmp/bad3.json"
refused "$tmp/bad3.json" "model_type: 'gemma' is not one"
sed 's/"hidden_act": "silu"/"hidden_act": "gelu"/' "$here/llama3-8b.json" > "$tmp/bad4.json"
refused "$tmp/bad4.json" "hidden_act: 'gelu' is not modelled"
sed 's/"attention_bias": false/"attention_bias": true/' "$here/llama3-8b.json" > "$tmp/bad5.json"
refused "$tmp/bad5.json" 'attention_bias: true'
printf '{"model_type": "llama",' > "$tmp/bad6.json"
refused "$tmp/bad6.json" 'not a JSON object'
sed 's/"use_sliding_window": false/"use_sliding_window": true/' "$here/qwen2-7b.json" > "$tmp/bad7.json"
refused "$tmp/bad7.json" 'use_sliding_window: true'
refused "$tmp/none.json" 'cannot open'
exit $fail
