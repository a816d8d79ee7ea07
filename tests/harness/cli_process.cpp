// The process runner is built once, in tests/support (nodeaudit_test_support, linked into every
// test). This file is empty and stays only while test lists still name it as a source.
