/* Test fixture: a valid shared library without the qrnn_plugin_entry entry point. */
int qrnn_test_not_a_plugin(void) { return 42; }
