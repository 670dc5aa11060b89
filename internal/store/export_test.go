package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PutAbsentOf writes n ABSENT items of scan against baseline, as a
// re-classification does (for the tests of concurrent ones).
func (s *Store) PutAbsentOf(ctx context.Context, scan, baseline int64, n int) (int64, error) {
	bl := make([]baselineFinding, n)
	for i := range bl {
		bl[i] = baselineFinding{it: item{aSK: &types.AttributeValueMemberS{Value: fmt.Sprintf("FINDING#%06d", i)},
			aName: &types.AttributeValueMemberS{Value: fmt.Sprint("CVE-2021-", 1000+i)}}}
	}
	return s.putAbsent(ctx, scan, baseline, bl, nil)
}

// DropOtherAbsentOf retires scan's ABSENT items of baselines other than
// baseline, as a re-classification does (for the tests of concurrent ones).
func (s *Store) DropOtherAbsentOf(ctx context.Context, scan, baseline int64) error {
	return s.dropOtherAbsent(ctx, scan, baseline)
}
