"""The companion page (DESIGN §14): the person's review side in a paired phone's browser, over HTTPS."""
