"""Adapters for agent frameworks: each translates one framework's memory interface to
memstrata's public API (`Store`, its layer handles, `Store.search`), never runs SQL,
and imports its framework only when its module is imported.

* `memstrata.integrations.langgraph`: `MemstrataStore`, a LangGraph `BaseStore`
  (`pip install 'memstrata[langgraph]'`);
* `memstrata.integrations.openai_agents`: `MemstrataSession` (the OpenAI Agents SDK's
  `Session`) and `memory_tools` (`pip install 'memstrata[openai-agents]'`);
* `memstrata.integrations.pydantic_ai`: `MemstrataConversationStore` (Pydantic AI's
  `ConversationStore` in session transcripts) and `memory_toolset`
  (`pip install 'memstrata[pydantic-ai]'`);
* `memstrata.integrations.memory_tools`: the framework-neutral recall / save a fact /
  record a decision functions the tool sets wrap.

Nothing here is imported by `import memstrata` or by the CLI.
"""
