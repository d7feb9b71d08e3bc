#pragma once
// The community uni_bench v1 protocol's fixed prompts (exact strings; see docs/metrics.md).
// Embedded so evalrun needs nothing at run time but itself.

namespace evalrun::uni_bench {

inline constexpr const char* kCode =
    "You are an expert Python engineer. Write a complete implementation of a thread-safe LRU cache class with TTL expiration support, including unit tests. Provide only code, no explanation.";
inline constexpr const char* kCodeB =
    "You are an expert systems engineer. Write a complete implementation of a lock-free SPSC ring buffer in C++17 with acquire/release memory ordering annotations. Provide only code, no explanation.";
inline constexpr const char* kEnTech =
    "Write a detailed technical explanation of how speculative decoding with a draft model works, covering the draft-verify loop, acceptance criteria, and why acceptance rate varies by domain. Aim for depth and precision.";
inline constexpr const char* kCnChat =
    "请用中文详细分析一下，为什么家用路由器长期不重启会越来越慢？从内存碎片、连接跟踪表、NAT 状态老化三个角度展开，给出可操作的解决建议。";
inline constexpr const char* kCnEssay =
    "请写一篇关于秋天的散文，描写北平的秋色，要求文笔优美，有细节描写，不少于五百字。";

struct Scenario {
  const char* name;    // evalrun's test name suffix
  const char* label;   // the label the community script prints
  const char* prompt;
};

// Single-stream scenarios, in the protocol's order.
inline constexpr Scenario kScenarios[] = {
    {"code", "代码生成", kCode},
    {"en_tech", "英文技术论述", kEnTech},
    {"cn_chat", "中文常规对话", kCnChat},
    {"cn_essay", "中文散文", kCnEssay},
};

inline constexpr int kMaxTokens = 512;
inline constexpr int kRounds = 3;

}  // namespace evalrun::uni_bench
