import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { DateTime, StatusBadge } from '../components/common';
import { FilterSelect } from '../components/filter-select';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';
import { SEVERITIES, type ViolationSearch } from '../list-search';
import { Named } from '../names';

type Violation = Response200<'/api/v1/violations'>['data'][number];

/** Every open policy violation, filtered by severity in the URL, each naming its certificate and rule. */
export default function Violations() {
  const { severity } = useSearch({ from: '/app/policies/violations' }) as ViolationSearch;
  const navigate = useNavigate({ from: '/policies/violations' });
  return (
    <ResourceList<Violation>
      key={severity ?? ''}
      title="Policy violations"
      intro={
        <p>
          Certificates that break a <Link to="/policies">policy rule</Link>; each is re-evaluated when the
          certificate or the rule changes, and leaves this list once it complies.
        </p>
      }
      empty="No certificate breaks a policy rule."
      queryKey={['violations', severity ?? '']}
      load={(page, per_page) =>
        api.get('/api/v1/violations', { query: { page, per_page, ...(severity ? { severity } : {}) } })
      }
      toolbar={
        <FilterSelect
          label="Severity"
          value={severity}
          options={SEVERITIES}
          onChange={(next) => void navigate({ search: next ? { severity: next } : {} })}
        />
      }
      rowKey={(v) => v.id}
      refs={(v) => [
        ['certificate', v.certificate_id],
        ['policy_rule', v.rule_id],
      ]}
      columns={(names) => [
        { key: 'severity', header: 'Severity', render: (v) => <StatusBadge status={v.severity} /> },
        {
          key: 'certificate',
          header: 'Certificate',
          render: (v) => <Named names={names} kind="certificate" id={v.certificate_id} />,
        },
        {
          key: 'rule',
          header: 'Rule',
          render: (v) => <Named names={names} kind="policy_rule" id={v.rule_id} />,
        },
        { key: 'message', header: 'What is wrong', render: (v) => v.message },
        { key: 'detected', header: 'Detected', render: (v) => <DateTime value={iso(v.detected_at)} /> },
      ]}
    />
  );
}
