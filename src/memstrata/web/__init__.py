"""HTTP adapters: the security every memstrata HTTP surface shares (`security`)."""
