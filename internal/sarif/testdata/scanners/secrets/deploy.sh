#!/bin/sh
# Fake token generated for scangate's scanner tests; it grants nothing.
curl -H "Authorization: token ghp_PuhyO35HYJodIBWbMEgBpb3ysHrvYkp3YhaB" https://example.invalid/api
curl -H "PRIVATE-TOKEN: glpat-FSbjGHr40hdw2apqJXdj" https://example.invalid/api
